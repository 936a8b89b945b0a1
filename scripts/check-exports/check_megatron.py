"""Run Megatron-LM's own argument parser and checks on inlay's exports.

usage: check_megatron.py MEGATRON_DIR FILE:WORLD_SIZE:CAPABILITY:LAYERS...

For each exported argument file: megatron/training/arguments.py's
parse_args with the file's arguments as argv and RANK=0, WORLD_SIZE=the
plan's GPU count in the environment (as torchrun sets them), and
CUDA_DEVICE_MAX_CONNECTIONS=1 (which Megatron requires with tensor or
context parallelism before Blackwell, and its example launchers set;
unset with Megatron-FSDP, which requires that); the
GPU's compute capability (e.g. 8.0 for an A100), which validate_args asks
torch.cuda for, is the plan's GPU type's; then
validate_args, then core_transformer_config_from_args, which builds the
TransformerConfig whose __post_init__ checks the uneven pipeline stages;
then megatron/core/transformer/transformer_block.py's
get_num_layers_to_build for every pipeline rank (and virtual stage), which
must give the plan's layers per stage (LAYERS, comma-separated). Prints
one line per file: "pass" or "fail: <Megatron's message>".
"""
import contextlib
import io
import os
import shlex
import sys
import traceback

import stubs


def setup(megatron_dir):
    sys.path.insert(0, megatron_dir)
    # Debian's torch 1.13 lacks these; Megatron imports them at module
    # level for checkpointing, FSDP, symmetric memory and GPU kernels.
    stubs.modules(
        missing=['torch.distributed.checkpoint', 'torch.distributed.tensor', 'torch.distributed._tensor',
                 'torch.distributed.device_mesh', 'torch.distributed._symmetric_memory', 'triton',
                 'numpy.dtypes'],
        # present in 1.13 but fails to import on Python 3.11 (a dataclass
        # with a mutable default, fixed in later torch)
        force=['torch.distributed._shard'])
    import torch
    stubs.attrs('torch', ['float8_e8m0fnu'])
    stubs.attrs('torch', ['compile'], stubs.identity)
    stubs.attrs('torch.distributed', ['DeviceMesh', '_coalescing_manager'])
    stubs.attrs('torch.cuda', ['MemPool'])
    stubs.attrs('torch.cuda.memory', ['CUDAPluggableAllocator'])
    stubs.attrs('torch.optim.optimizer', ['ParamsT'])
    stubs.attrs('typing', ['override'], stubs.identity)  # Python 3.12
    # torch 1.13's TorchScript cannot script the methods Megatron marks
    # @jit_fuser (it picks torch.jit.script below torch 2.2); compile
    # nothing.
    torch.jit.script = stubs.identity
    stubs.STUBBED.append('torch.jit.script (identity)')
    stubs.STUBBED.append('torch.cuda.get_device_capability and get_device_properties (the plan GPU\'s)')


def argv_of(path):
    with open(path) as f:
        return shlex.split(f.read().replace('\\\n', ' '))


class _Properties:
    def __init__(self, capability):
        self.major, self.minor = capability


def check(path, world, capability, layers):
    import torch
    from megatron.training.arguments import parse_args, validate_args, core_transformer_config_from_args
    from megatron.core.transformer.transformer_block import get_num_layers_to_build
    # Transformer Engine (GPU kernels) is not here; TransformerConfig asks
    # for its fused RoPE kernel, which Megatron applies by default
    from megatron.core.models.common.embeddings import rope_utils
    if rope_utils.fused_apply_rotary_pos_emb is None:
        rope_utils.fused_apply_rotary_pos_emb = stubs.identity
        stubs.STUBBED.append('rope_utils.fused_apply_rotary_pos_emb (Transformer Engine\'s fused RoPE)')
    # the only questions validate_args asks the GPU
    torch.cuda.get_device_capability = lambda device=None: capability
    torch.cuda.get_device_properties = lambda device=None: _Properties(capability)
    os.environ['RANK'], os.environ['WORLD_SIZE'] = '0', str(world)
    sys.argv = ['pretrain_gpt.py'] + argv_of(path)
    # as a launcher sets it: 1 for tensor or context parallelism before
    # Blackwell, unset with Megatron-FSDP (validate_args asserts both)
    os.environ.pop('CUDA_DEVICE_MAX_CONNECTIONS', None)
    if '--use-megatron-fsdp' not in sys.argv:
        os.environ['CUDA_DEVICE_MAX_CONNECTIONS'] = '1'
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            args = parse_args()
            validate_args(args)
            config = core_transformer_config_from_args(args)
            vp = args.virtual_pipeline_model_parallel_size or 1
            built = [sum(get_num_layers_to_build(config, vp_stage=v if vp > 1 else None, pp_rank=r) for v in range(vp))
                     for r in range(args.pipeline_model_parallel_size)]
    except SystemExit as e:
        msg = [l for l in out.getvalue().splitlines() if 'error' in l]
        return 'fail: parse_args: ' + (msg[-1] if msg else 'exit %s' % e.code)
    except Exception as e:  # Megatron's own assertion or error
        where = traceback.extract_tb(e.__traceback__)[-1]
        return 'fail: %s: %s (%s:%d)' % (type(e).__name__, str(e).strip().replace('\n', ' '),
                                          os.path.relpath(where.filename, sys.path[0]), where.lineno)
    if built != layers:
        return 'fail: Megatron-LM builds %s layers per stage, the plan has %s' % (built, layers)
    return 'pass: dp %d, layers per stage %s' % (args.data_parallel_size, built)


def main():
    setup(sys.argv[1])
    items = sys.argv[2:]
    for item in items:
        path, world, cap, layers = item.rsplit(':', 3)
        major, minor = cap.split('.')
        print('%s\t%s' % (path, check(path, int(world), (int(major), int(minor)), [int(n) for n in layers.split(',')])))
    print('stubbed\t' + ', '.join(stubs.summary()))


if __name__ == '__main__':
    main()
