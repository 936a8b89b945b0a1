"""Run torchtitan's own config manager and degree checks on inlay's exports.

usage: check_torchtitan.py TORCHTITAN_DIR FILE:WORLD_SIZE:LAYERS...

For each exported TOML: torchtitan/config/manager.py's ConfigManager.
parse_args(["--job.config_file", FILE]), which loads the TOML into the
JobConfig dataclasses and rejects any section or key JobConfig lacks; the
values are then checked against the types JobConfig declares for them
(Literal choices, int, bool, lists), which tyro, stubbed below, would
check on the command line; then torchtitan/distributed/parallel_dims.py's
ParallelDims with the file's degrees and the plan's world size, whose
__post_init__ validates them; with pipeline parallelism, the layers each
rank holds under torchtitan's placement of model parts (pipeline_module_
split: part s + k*pp on rank s, for looped schedules), which must be the
plan's layers per stage (LAYERS, comma-separated). TOML config files are torchtitan's form up
to v0.2.2 (its config system moved to Python registries after it). Prints
one line per file: "pass" or "fail: <torchtitan's message>".
"""
import contextlib
import dataclasses
import io
import logging
import os
import sys
import traceback
import typing

import stubs


def setup(torchtitan_dir):
    sys.path.insert(0, torchtitan_dir)
    # tyro: torchtitan's command-line layer over the TOML; no command-line
    # overrides are given, so tyro.cli would return the TOML's config as
    # it stands (tyro is not in Debian 12). The package's __init__ imports
    # its components (quantization, checkpointing, tokenizers), which need
    # a newer torch than 1.13, triton and tokenizers.
    stubs.modules(missing=['tyro', 'torch.distributed.device_mesh', 'torch.distributed.tensor',
                           'torch.distributed.checkpoint', 'torch.distributed.pipelining',
                           'torch.nn.attention', 'torch._inductor', 'triton', 'tokenizers', 'torchao'])
    stubs.attrs('torch._utils', ['_get_device_module'])
    stubs.attrs('torch', ['compile'], stubs.identity)
    import tyro
    tyro.cli = lambda cls, args=None, default=None, registry=None, **k: default
    logging.disable(logging.WARNING)


def _typecheck(obj, where=''):
    """Check each field's value against the type JobConfig declares."""
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        v, t = getattr(obj, f.name), hints.get(f.name)
        name = where + f.name
        if dataclasses.is_dataclass(v):
            _typecheck(v, name + '.')
            continue
        if not _fits(v, t):
            raise TypeError('%s = %r is not of the declared type %s' % (name, v, t))


def _fits(v, t):
    origin, args = typing.get_origin(t), typing.get_args(t)
    if t is None or t is typing.Any:
        return True
    if origin is typing.Literal:
        return v in args
    if origin in (typing.Union, getattr(__import__('types'), 'UnionType', None)):
        return any(_fits(v, a) for a in args)
    if t is type(None):
        return v is None
    if origin in (list, tuple):
        return isinstance(v, (list, tuple)) and (not args or all(_fits(x, args[0]) for x in v))
    if origin is dict:
        return isinstance(v, dict)
    if t is float:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t is int:
        return isinstance(v, int) and not isinstance(v, bool)
    if isinstance(t, type):
        return isinstance(v, t)
    return True


def check(path, world, layers):
    from torchtitan.config import ConfigManager
    from torchtitan.distributed.parallel_dims import ParallelDims
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            cfg = ConfigManager().parse_args(['--job.config_file', path])
            _typecheck(cfg)
            p = cfg.parallelism
            dims = ParallelDims(dp_replicate=p.data_parallel_replicate_degree, dp_shard=p.data_parallel_shard_degree,
                                cp=p.context_parallel_degree, tp=p.tensor_parallel_degree,
                                pp=p.pipeline_parallel_degree, ep=p.expert_parallel_degree,
                                etp=p.expert_tensor_parallel_degree, world_size=world)
    except Exception as e:  # torchtitan's own assertion or error
        where = traceback.extract_tb(e.__traceback__)[-1]
        return 'fail: %s: %s (%s:%d)' % (type(e).__name__, str(e).strip().replace('\n', ' '),
                                          os.path.relpath(where.filename, sys.path[0]), where.lineno)
    parts = p.module_fqns_per_model_part
    if p.pipeline_parallel_degree > 1:
        held = [sum(1 for i, part in enumerate(parts or []) if i % dims.pp == r for m in part if m.startswith('layers.'))
                for r in range(dims.pp)]
        if held != layers:
            return 'fail: torchtitan places %s layers per rank, the plan has %s' % (held, layers)
    return 'pass: dp %d x cp %d x tp %d x pp %d%s' % (dims.dp_replicate * dims.dp_shard, dims.cp, dims.tp, dims.pp,
                                                     ', %d model parts' % len(parts) if parts else '')


def main():
    setup(sys.argv[1])
    for item in sys.argv[2:]:
        path, world, layers = item.rsplit(':', 2)
        print('%s\t%s' % (path, check(path, int(world), [int(n) for n in layers.split(',')])))
    stubs.STUBBED.append('tyro.cli (returns the TOML\'s config)')
    print('stubbed\t' + ', '.join(stubs.summary()))


if __name__ == '__main__':
    main()
