"""One fault per launch (``sys.argv[1]``), each of which must end the whole job quickly:

- ``raise``: rank 1 raises while rank 0 waits in an all_reduce;
- ``stall``: rank 1 sleeps; rank 0's all_reduce times out (timeout=1.5 s) naming it;
- ``stall_async``: the same with ``async_op=True`` (the all-reduce runs on the group's
  communication thread; ``wait()`` raises naming it);
- ``mismatch``: with EMBER_DISTRIBUTED_DEBUG=1 the ranks all-reduce different shapes;
- ``exit``: rank 1 calls sys.exit(3) while rank 0 waits in a barrier;
- ``SIGKILL`` / ``SIGSEGV``: rank 1 sends itself that signal while rank 0 waits in an
  all_reduce.
"""

import os
import signal
import sys
import time

import ember
import ember.distributed as dist

fault = sys.argv[1]
dist.init_process_group("gloo", timeout=1.5 if fault.startswith("stall") else 60)
R = dist.get_rank()
dist.barrier()
if fault == "raise":
    if R == 1:
        raise ValueError("rank 1 gives up")
    dist.all_reduce(ember.ones(4))
elif fault == "stall":
    if R == 1:
        time.sleep(30)
    dist.all_reduce(ember.ones(4))
elif fault == "stall_async":
    if R == 1:
        time.sleep(30)
    dist.all_reduce(ember.ones(4), async_op=True).wait()
elif fault == "mismatch":
    dist.all_reduce(ember.ones(3 + R))
elif fault == "exit":
    if R == 1:
        sys.exit(3)
    dist.barrier()
elif fault in ("SIGKILL", "SIGSEGV"):
    if R == 1:
        os.kill(os.getpid(), getattr(signal, fault))
    dist.all_reduce(ember.ones(4))
