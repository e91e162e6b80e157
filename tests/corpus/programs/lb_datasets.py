# corpus: exact
"""Learn the Basics, Datasets & DataLoaders and Transforms: a custom Dataset with
__len__/__getitem__ and transform/target_transform, a hand-written Lambda one-hot target,
and iterating a DataLoader."""

import torch
from torch.utils.data import DataLoader, Dataset

labels_map = {
    0: "T-Shirt",
    1: "Trouser",
    2: "Pullover",
    3: "Dress",
    4: "Coat",
    5: "Sandal",
    6: "Shirt",
    7: "Sneaker",
    8: "Bag",
    9: "Ankle Boot",
}


class Lambda:
    def __init__(self, lambd):
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class ToTensor:
    def __call__(self, pic):
        return torch.tensor(pic, dtype=torch.float32).div(255).unsqueeze(0)


class CustomImageDataset(Dataset):
    def __init__(self, n, transform=None, target_transform=None):
        self.img_labels = [(f"img_{i}.png", (i * 7) % 10) for i in range(n)]
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        name, label = self.img_labels[idx]
        image = [[(r * 28 + c + idx * 13) % 256 for c in range(28)] for r in range(28)]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


ds = CustomImageDataset(
    12,
    transform=ToTensor(),
    target_transform=Lambda(
        lambda y: torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)
    ),
)
print(len(ds))
img, label = ds[3]
print(img.shape, img.dtype, f"{img.sum().item():.4f}")
print(label)
for i in range(1, 4):
    sample_idx = i * 3
    img, label = ds[sample_idx]
    print(labels_map[int(label.argmax())], img.squeeze().shape, f"{img.mean().item():.6f}")

train_dataloader = DataLoader(ds, batch_size=5, shuffle=False)
for train_features, train_labels in train_dataloader:
    print(f"Feature batch shape: {train_features.size()}")
    print(f"Labels batch shape: {train_labels.size()}")
train_features, train_labels = next(iter(train_dataloader))
img = train_features[0].squeeze()
label = train_labels[0]
print(img.shape, f"{img[0, :4]}")
print(f"Label: {label}")

plain = CustomImageDataset(4)
loader = DataLoader(plain, batch_size=2, collate_fn=lambda b: b)
for batch in loader:
    print(len(batch), [lbl for _, lbl in batch])
