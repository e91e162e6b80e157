"""L-BFGS with an optional strong-Wolfe line search, ported from PyTorch's ``torch.optim.LBFGS``
(itself from minFunc / torch7's optim) so the iterates match it step by step.

Works on the parameters flattened into one vector (NumPy or CuPy, wherever they live).

>>> import ember
>>> w = ember.nn.Parameter(ember.tensor([3.0]))
>>> opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad(); loss = ((w - 1) ** 2).sum(); loss.backward(); return loss
>>> _ = opt.step(closure); round(w.item(), 4)
1.0
"""

from __future__ import annotations

from .._config import enable_grad, no_grad
from ..backend import xp_of
from .optimizer import Optimizer


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through two points with values and slopes, in ``bounds``."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = d2_square**0.5
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, lo), hi)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):  # fmt: skip
    """A step length ``t`` along ``d`` meeting the strong Wolfe conditions (bracket, then
    zoom); returns (f, g, t, evaluations)."""
    xp = xp_of(d)
    d_norm = float(xp.abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, (min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                near_top = abs(t - max(bracket)) < abs(t - min(bracket))
                t = max(bracket) - eps if near_top else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """Limited-memory BFGS; ``step(closure)`` runs up to ``max_iter`` iterations, calling
    ``closure`` (which must zero the gradients, compute the loss, call ``backward`` and return
    the loss) as often as the line search needs. One parameter group only.
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:  # fmt: skip
        if not 0.0 <= lr:
            raise ValueError(f"LBFGS: invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: only 'strong_wolfe' is supported, got {line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)  # fmt: skip
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        xp = xp_of(self._params[0]._data)
        return xp.concatenate([
            p._grad._data.ravel() if p._grad is not None else xp.zeros(p._data.size, p._data.dtype)
            for p in self._params
        ])  # fmt: skip

    def _add_grad(self, step_size: float, update) -> None:
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += (update[offset : offset + n] * step_size).reshape(p._data.shape)
            p._version[0] += 1
            offset += n

    def _clone_params(self) -> list:
        return [p._data.copy() for p in self._params]

    def _set_params(self, data: list) -> None:
        for p, d in zip(self._params, data):
            p._data[...] = d
            p._version[0] += 1

    def _evaluate(self, closure) -> float:
        with enable_grad():
            return float(closure())

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = self._evaluate(closure)
        flat_grad = self._flat_grad()
        self._set_params(x)
        return loss, flat_grad

    def step(self, closure):  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; returns the first ``closure()`` loss."""
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        xp = xp_of(self._params[0]._data)
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(xp.abs(flat_grad).max()) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y @ y)
                al = state.setdefault("al", [None] * history_size)  # kept, as PyTorch keeps it
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = float(old_stps[i] @ q) * ro[i]
                    q = q - old_dirs[i] * al[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = float(old_dirs[i] @ r) * ro[i]
                    r += old_stps[i] * (al[i] - be_i)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(xp.abs(flat_grad).sum())) * lr
            else:
                t = lr
            gtd = float(flat_grad @ d)
            if gtd > -tol_change:
                break
            evals = 0
            if group["line_search_fn"] is not None:
                x_init = self._clone_params()

                def obj_func(x, step, direction):
                    return self._directional_evaluate(closure, x, step, direction)

                loss, flat_grad, t, evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = float(xp.abs(flat_grad).max()) <= tol_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = self._evaluate(closure)
                    flat_grad = self._flat_grad()
                    opt_cond = float(xp.abs(flat_grad).max()) <= tol_grad
                    evals = 1
            current_evals += evals
            state["func_evals"] += evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if float(xp.abs(d * t).max()) <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)  # fmt: skip
        return orig_loss
