"""``SummaryWriter``: PyTorch's TensorBoard logger, writing real event files with tensorboardX.

The interface and the files written are those of ``torch.utils.tensorboard.SummaryWriter``
(same tags, folder layout for ``add_scalars`` and ``add_hparams``, histogram buckets, image
scaling and grids); values may be ember tensors on any device, NumPy arrays or Python numbers.

Events are serialized when added and appended to the event file once ``max_queue`` of them are
pending or ``flush_secs`` have passed (checked at each add), and always on ``flush()``,
``close()``, garbage collection and interpreter exit. After ``flush()`` every event added so far
is in the file.

>>> import os, tempfile
>>> import ember
>>> from ember.utils.tensorboard import SummaryWriter
>>> with SummaryWriter(tempfile.mkdtemp()) as writer:
...     for step in range(3):
...         writer.add_scalar("loss", 1.0 / (step + 1), step)
...     writer.add_histogram("weights", ember.randn(100), 2)
>>> [f.startswith("events.out.tfevents.") for f in os.listdir(writer.get_logdir())]
[True]
"""

from __future__ import annotations

import atexit
import itertools
import numbers
import os
import socket
import struct
import threading
import time
import weakref
from collections.abc import Mapping

import numpy as np

from ..._errors import DTypeError, EmberError
from ..._tensor import Tensor
from ._convert import (
    encode_png,
    histogram,
    image_hwc,
    step_value,
    walltime_value,
)
from ._convert import (
    scalar_value as _scalar,
)
from ._tbx import tbx

__all__ = ["SummaryWriter"]

_UID = itertools.count()
_OPEN: weakref.WeakSet[_EventFile] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for f in list(_OPEN):
        f.close()


class _EventFile:
    """One ``events.out.tfevents.*`` file: TFRecord framing of serialized ``Event`` protos."""

    def __init__(self, log_dir: str, max_queue: int, flush_secs: float, filename_suffix: str):
        self._tbx = tbx()
        self.log_dir = log_dir
        try:
            os.makedirs(log_dir, exist_ok=True)
        except OSError as exc:
            raise EmberError(f"SummaryWriter: cannot create log_dir {log_dir!r}: {exc}") from None
        # tensorboard's own naming: the pid and a counter keep files of writers started in the
        # same second apart
        name = (
            f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{next(_UID)}{filename_suffix}"
        )
        self.path = os.path.join(log_dir, name)
        self._file = open(self.path, "wb")  # noqa: SIM115 (closed by close())
        self._pending: list[bytes] = []
        self._max_queue = max(int(max_queue), 1)
        self._flush_secs = flush_secs
        self._last_flush = time.monotonic()
        self._lock = threading.Lock()
        _OPEN.add(self)
        first = self._tbx.event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2")
        self.add_event(first)
        self.flush()

    def add_event(self, event, step: int | None = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        data = event.SerializeToString()
        with self._lock:
            if self._file is None:
                raise EmberError(f"SummaryWriter: event file {self.path} is closed")
            self._pending.append(data)
            if (
                len(self._pending) >= self._max_queue
                or time.monotonic() - self._last_flush >= self._flush_secs
            ):
                self._write_pending()

    def add_summary(self, summary, step: int | None = None, walltime: float | None = None) -> None:
        self.add_event(self._tbx.event_pb2.Event(summary=summary), step, walltime)

    def _write_pending(self) -> None:
        crc = self._tbx.masked_crc32c
        parts = []
        for data in self._pending:
            header = struct.pack("<Q", len(data))
            parts += [header, struct.pack("<I", crc(header)), data, struct.pack("<I", crc(data))]
        self._pending.clear()
        self._file.write(b"".join(parts))
        self._file.flush()
        self._last_flush = time.monotonic()

    def get_logdir(self) -> str:
        return self.log_dir

    def flush(self) -> None:
        with self._lock:
            if self._file is not None:
                self._write_pending()

    def close(self) -> None:
        with self._lock:
            if self._file is None:
                return
            try:
                self._write_pending()
            finally:
                self._file.close()
                self._file = None
                _OPEN.discard(self)

    def __del__(self) -> None:
        if getattr(self, "_file", None) is not None:
            try:
                self.close()
            except Exception:  # noqa: BLE001  (never raise from a finalizer)
                pass


class SummaryWriter:
    """Write TensorBoard event files into ``log_dir`` (``torch.utils.tensorboard.SummaryWriter``).

    ``log_dir`` defaults to ``runs/<Mon><DD>_<HH-MM-SS>_<hostname><comment>``. ``purge_step``
    hides events at or after that step left by a crashed run in the same folder; ``max_queue``
    events are buffered before a write, and pending events are written at least every
    ``flush_secs`` (checked when events are added). ``filename_suffix`` ends the event file's
    name. Needs tensorboardX (``pip install tensorboardX``), imported on first use.

    >>> import tempfile
    >>> import ember
    >>> from ember.utils.tensorboard import SummaryWriter
    >>> writer = SummaryWriter(tempfile.mkdtemp(), flush_secs=10)
    >>> writer.add_scalar("train/loss", ember.tensor(0.25), global_step=1)
    >>> writer.add_text("notes", "lr 0.1, batch 64")
    >>> writer.close()
    """

    def __init__(
        self,
        log_dir: str | os.PathLike | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            from datetime import datetime

            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = step_value(purge_step, "SummaryWriter", "purge_step")
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: _EventFile | None = None
        self.all_writers: dict[str, _EventFile] | None = None
        self._get_file_writer()

    def _get_file_writer(self) -> _EventFile:
        """The writer of ``log_dir`` (a new event file after ``close()``)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = _EventFile(
                os.fspath(self.log_dir), self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                pb = tbx().event_pb2
                step = self.purge_step
                self.file_writer.add_event(pb.Event(step=step, file_version="brain.Event:2"))
                start = pb.SessionLog(status=pb.SessionLog.START)
                self.file_writer.add_event(pb.Event(step=step, session_log=start))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str | os.PathLike:
        """The folder the event files go to.

        >>> import tempfile
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> folder = tempfile.mkdtemp()
        >>> with SummaryWriter(folder) as w:
        ...     w.get_logdir() == folder
        True
        """
        return self.log_dir

    @staticmethod
    def _check_tag(tag, where: str, name: str = "tag") -> str:
        if not isinstance(tag, str):
            raise DTypeError(f"{where}: {name} must be a string, got {type(tag).__name__}")
        return tag

    # -- scalars --------------------------------------------------------------------------------
    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None) -> None:
        """Log one number (stored as float32) under ``tag`` at ``global_step``.

        ``scalar_value`` is a Python number, a one-element NumPy array or an ember tensor (on
        any device; one that requires grad is detached).

        >>> import tempfile
        >>> import ember
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_scalar("lr", 0.1, 0)
        ...     w.add_scalar("loss", ember.ones(1, requires_grad=True).sum(), 0)
        """
        where = "add_scalar"
        tb = tbx().summary_pb2
        value = tb.Summary.Value(
            tag=self._check_tag(tag, where), simple_value=_scalar(scalar_value, where)
        )
        self._get_file_writer().add_summary(
            tb.Summary(value=[value]),
            step_value(global_step, where),
            walltime_value(walltime, where),
        )

    def add_scalars(
        self, main_tag: str, tag_scalar_dict: Mapping[str, object], global_step=None, walltime=None
    ) -> None:
        """Log several numbers in one chart: each key goes to its own run folder
        ``<log_dir>/<main_tag>_<key>`` under the tag ``main_tag`` (as PyTorch does).

        >>> import os, tempfile
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_scalars("loss", {"train": 0.5, "test": 0.7}, 1)
        ...     sorted(d for d in os.listdir(w.get_logdir()) if d.startswith("loss_"))
        ['loss_test', 'loss_train']
        """
        where = "add_scalars"
        self._check_tag(main_tag, where, "main_tag")
        if not isinstance(tag_scalar_dict, Mapping):
            raise DTypeError(
                f"{where}: tag_scalar_dict must be a dict of tag -> number, "
                f"got {type(tag_scalar_dict).__name__}"
            )
        step = step_value(global_step, where)
        walltime = time.time() if walltime is None else walltime_value(walltime, where)
        values = {
            self._check_tag(tag, where, "a key of tag_scalar_dict"): _scalar(
                v, where, f"tag_scalar_dict[{tag!r}]"
            )
            for tag, v in tag_scalar_dict.items()
        }
        tb = tbx().summary_pb2
        fw_logdir = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in values.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = _EventFile(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            summary = tb.Summary(value=[tb.Summary.Value(tag=main_tag, simple_value=value)])
            fw.add_summary(summary, step, walltime)

    # -- histograms -----------------------------------------------------------------------------
    def add_histogram(
        self, tag: str, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None
    ) -> None:
        """Log the distribution of ``values`` (any shape, flattened).

        ``bins`` is ``'tensorflow'`` (TensorFlow's exponential buckets, the default), a NumPy
        rule such as ``'auto'`` or ``'fd'``, a number of bins or the bin edges; ``max_bins``
        merges neighbouring buckets down to at most that many.

        >>> import tempfile
        >>> import numpy as np
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_histogram("activations", np.random.rand(1000), 0, bins="auto")
        """
        where = "add_histogram"
        tb = tbx().summary_pb2
        self._check_tag(tag, where)
        if max_bins is not None:
            max_bins = step_value(max_bins, where, "max_bins")
            if max_bins < 1:
                raise EmberError(f"{where}: max_bins must be at least 1, got {max_bins}")
        histo = tb.HistogramProto(**histogram(values, bins, max_bins, where))
        self._get_file_writer().add_summary(
            tb.Summary(value=[tb.Summary.Value(tag=tag, histo=histo)]),
            step_value(global_step, where),
            walltime_value(walltime, where),
        )

    # -- images ---------------------------------------------------------------------------------
    def _image(self, where, tag, img_tensor, global_step, walltime, dataformats) -> None:
        tb = tbx().summary_pb2
        self._check_tag(tag, where)
        hwc = image_hwc(img_tensor, dataformats, where)
        height, width, channels = hwc.shape
        image = tb.Summary.Image(
            height=height,
            width=width,
            colorspace=channels,
            encoded_image_string=encode_png(hwc, where),
        )
        self._get_file_writer().add_summary(
            tb.Summary(value=[tb.Summary.Value(tag=tag, image=image)]),
            step_value(global_step, where),
            walltime_value(walltime, where),
        )

    def add_image(
        self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW"
    ) -> None:
        """Log one image, laid out as ``dataformats`` (``'CHW'``, ``'HWC'`` or ``'HW'``).

        Channels are 1 (grayscale), 3 (RGB) or 4 (RGBA). uint8 pixels are used as they are;
        any other type is read as 0..1 and scaled by 255 (clipped), as in PyTorch.

        >>> import tempfile
        >>> import ember
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_image("digit", ember.rand(1, 8, 8), 0)
        ...     w.add_image("photo", ember.rand(8, 8, 3), 0, dataformats="HWC")
        """
        self._image("add_image", tag, img_tensor, global_step, walltime, dataformats)

    def add_images(
        self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW"
    ) -> None:
        """Log a batch of images as one grid of up to 8 per row (``'NCHW'`` or ``'NHWC'``).

        >>> import tempfile
        >>> import ember
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_images("batch", ember.rand(16, 1, 8, 8), 0)
        """
        self._image("add_images", tag, img_tensor, global_step, walltime, dataformats)

    # -- text and hyperparameters ---------------------------------------------------------------
    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Log text (Markdown in TensorBoard) under ``<tag>/text_summary``.

        >>> import tempfile
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_text("config", "**lr** = 0.1", 0)
        """
        where = "add_text"
        self._check_tag(tag, where)
        if not isinstance(text_string, str):
            raise DTypeError(
                f"{where}: text_string must be a str, got {type(text_string).__name__}"
            )
        m = tbx()
        plugin = m.summary_pb2.SummaryMetadata.PluginData(
            plugin_name="text",
            content=m.plugin_text_pb2.TextPluginData(version=0).SerializeToString(),
        )
        shape = m.tensor_shape_pb2.TensorShapeProto(
            dim=[m.tensor_shape_pb2.TensorShapeProto.Dim(size=1)]
        )
        tensor = m.tensor_pb2.TensorProto(
            dtype="DT_STRING", string_val=[text_string.encode("utf-8")], tensor_shape=shape
        )
        value = m.summary_pb2.Summary.Value(
            tag=tag + "/text_summary",
            metadata=m.summary_pb2.SummaryMetadata(plugin_data=plugin),
            tensor=tensor,
        )
        self._get_file_writer().add_summary(
            m.summary_pb2.Summary(value=[value]),
            step_value(global_step, where),
            walltime_value(walltime, where),
        )

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete: dict | None = None,
        run_name: str | None = None,
        global_step=None,
    ) -> None:
        """Log one run's hyperparameters and final metrics for TensorBoard's HParams tab.

        Written, as in PyTorch, to the sub-folder ``run_name`` (default: the current time),
        with each metric also logged as a scalar there. Values are numbers, strings or bools
        (``None`` entries are skipped); ``hparam_domain_discrete`` lists the possible values
        of some of them.

        >>> import os, tempfile
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as w:
        ...     w.add_hparams({"lr": 0.1, "optimizer": "sgd"}, {"hparam/accuracy": 0.97},
        ...                   run_name="run0")
        ...     sorted(os.listdir(os.path.join(w.get_logdir(), "run0")))[0][:20]
        'events.out.tfevents.'
        """
        where = "add_hparams"
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise DTypeError(
                f"{where}: hparam_dict and metric_dict must be dicts, got "
                f"{type(hparam_dict).__name__} and {type(metric_dict).__name__}"
            )
        domains = hparam_domain_discrete or {}
        if not isinstance(domains, dict):
            raise DTypeError(f"{where}: hparam_domain_discrete must be a dict of lists")
        m = tbx()
        api, plug, struct_pb2 = m.api_pb2, m.plugin_hparams_pb2, m.struct_pb2
        hps, ssi = [], plug.SessionStartInfo()
        for k, v in hparam_dict.items():
            if v is None:
                continue
            if isinstance(v, bool):
                field, kind = "bool_value", "DATA_TYPE_BOOL"
            elif isinstance(v, str):
                field, kind = "string_value", "DATA_TYPE_STRING"
            else:
                field, kind = "number_value", "DATA_TYPE_FLOAT64"
                try:
                    if not isinstance(v, numbers.Number | np.generic | np.ndarray | Tensor):
                        raise DTypeError
                    v = _scalar(v, where, f"hparam_dict[{k!r}]")
                except EmberError:
                    raise DTypeError(
                        f"{where}: hparam_dict[{k!r}] must be a number, str, bool or a "
                        f"one-element tensor, got {type(v).__name__}"
                    ) from None
            setattr(ssi.hparams[k], field, v)
            domain = None
            if k in domains:
                choices = domains[k]
                if not isinstance(choices, list) or not all(
                    isinstance(c, type(hparam_dict[k])) for c in choices
                ):
                    raise DTypeError(
                        f"{where}: hparam_domain_discrete[{k!r}] must be a list of "
                        f"{type(hparam_dict[k]).__name__} like hparam_dict[{k!r}]"
                    )
                domain = struct_pb2.ListValue(
                    values=[struct_pb2.Value(**{field: c}) for c in choices]
                )
            hps.append(
                api.HParamInfo(name=k, type=api.DataType.Value(kind), domain_discrete=domain)
            )
        metrics = {k: _scalar(v, where, f"metric_dict[{k!r}]") for k, v in metric_dict.items()}

        def summary(tag, **content):
            data = plug.HParamsPluginData(version=0, **content).SerializeToString()
            meta = m.summary_pb2.SummaryMetadata(
                plugin_data=m.summary_pb2.SummaryMetadata.PluginData(
                    plugin_name="hparams", content=data
                )
            )
            return m.summary_pb2.Summary(
                value=[m.summary_pb2.Summary.Value(tag=tag, metadata=meta)]
            )

        exp = api.Experiment(
            hparam_infos=hps,
            metric_infos=[api.MetricInfo(name=api.MetricName(tag=k)) for k in metrics],
        )
        end = plug.SessionEndInfo(status=api.Status.Value("STATUS_SUCCESS"))
        step = step_value(global_step, where)
        run_name = run_name or str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            fw = w_hp._get_file_writer()
            fw.add_summary(summary("_hparams_/experiment", experiment=exp), step)
            fw.add_summary(summary("_hparams_/session_start_info", session_start_info=ssi), step)
            fw.add_summary(summary("_hparams_/session_end_info", session_end_info=end), step)
            for k, v in metrics.items():
                w_hp.add_scalar(k, v, step)

    # -- lifetime -------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write every pending event to disk.

        >>> import tempfile
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> w = SummaryWriter(tempfile.mkdtemp()); w.add_scalar("x", 1.0, 0); w.flush(); w.close()
        """
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file; adding more afterwards starts a new file.

        >>> import tempfile
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> w = SummaryWriter(tempfile.mkdtemp()); w.close(); w.close()  # closing twice is fine
        """
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SummaryWriter(log_dir={os.fspath(self.log_dir)!r})"
