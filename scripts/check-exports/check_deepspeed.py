"""Run DeepSpeed's own config class on inlay's exports.

usage: check_deepspeed.py DEEPSPEED_DIR FILE:DP...

For each exported JSON: deepspeed/runtime/config.py's DeepSpeedConfig,
which reads every section (ZeRO, precision, pipeline) and checks the batch
sizes (train_batch_size = micro-batch x gradient accumulation x data-
parallel size), with the data-parallel size the plan's, given as DeepSpeed
takes it from Megatron-style model-parallel units (mpu.
get_data_parallel_world_size). Prints one line per file: "pass" or
"fail: <DeepSpeed's message>".
"""
import contextlib
import io
import json
import logging
import os
import sys
import traceback

import stubs


class _MPU:
    """The model-parallel unit DeepSpeed asks for the data-parallel size."""

    def __init__(self, dp):
        self.dp = dp

    def get_data_parallel_world_size(self):
        return self.dp


def setup(deepspeed_dir):
    sys.path.insert(0, deepspeed_dir)
    # hjson: DeepSpeed's reader of config files; the file is read here with
    # json and given to DeepSpeedConfig as a dict, as DeepSpeed allows.
    # einops: imported at module level by a model file; not in Debian 12.
    stubs.modules(missing=['hjson', 'einops'])
    logging.disable(logging.WARNING)


def check(path, dp):
    from deepspeed.runtime import config as dsconfig
    # torch.distributed is not initialised here: this process is rank 0
    dsconfig.dist.get_rank = lambda *a, **k: 0
    with open(path) as f:
        cfg = json.load(f)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            c = dsconfig.DeepSpeedConfig(cfg, mpu=_MPU(dp))
    except Exception as e:  # DeepSpeed's own assertion or error
        where = traceback.extract_tb(e.__traceback__)[-1]
        return 'fail: %s: %s (%s:%d)' % (type(e).__name__, str(e).strip().replace('\n', ' '),
                                          os.path.relpath(where.filename, sys.path[0]), where.lineno)
    return 'pass: batch %d = %d x %d x dp %d, zero %d' % (
        c.train_batch_size, c.train_micro_batch_size_per_gpu, c.gradient_accumulation_steps, c.world_size,
        c.zero_optimization_stage)


def main():
    setup(sys.argv[1])
    for item in sys.argv[2:]:
        path, dp = item.rsplit(':', 1)
        print('%s\t%s' % (path, check(path, int(dp))))
    stubs.STUBBED.append('deepspeed.comm.get_rank (0)')
    print('stubbed\t' + ', '.join(stubs.summary()))


if __name__ == '__main__':
    main()
