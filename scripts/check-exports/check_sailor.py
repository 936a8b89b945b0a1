"""Run Sailor's own plan reader and simulator on inlay's plan_config exports.

usage: check_sailor.py SAILOR_DIR FILE:MODEL:WORLD_SIZE...

For each exported plan_config JSON: sailor/Planner/simulations/
runtime_simulator.py's convert_homogeneous, the function through which
Sailor's simulator reads a plan_config's pipeline_list (stages, layers,
[[[gpu_type, gpus_per_node, zone]], tp] per replica, dp), checked to cover
the plan's GPUs; then, for the models Sailor ships profiles of (OPT-350M,
GPT-Neo-2.7B, Llama-3-8B), its Simulator on the same dict:
check_config_fits (Sailor's memory model) and simulate_iteration_time
(its iteration time from its profiles and network coefficients), where
its profiles have the plan's GPU types and TP degrees at its micro-batch.
Prints one line per file: "pass" or "fail: <Sailor's message>"; Sailor's
memory verdict and time are printed beside a pass.
"""
import contextlib
import io
import json
import os
import sys
import traceback

import stubs

# inlay's model presets as Sailor names them in llm_info.json and its
# profiles; the shape as in Sailor's training configs.
MODELS = {
    'opt-350m': dict(model='OPT-350', hidden_size=1024, num_layers=24, heads=16, vocab_size=50272,
                     sequence_length=2048, max_position_embeddings=2048),
    'gpt-neo-2.7b': dict(model='GPT-Neo-2.7', hidden_size=2560, num_layers=32, heads=32, vocab_size=50257,
                         sequence_length=2048, max_position_embeddings=2048),
    'llama-3-8b': dict(model='LLAMA-3-8', hidden_size=4096, num_layers=32, heads=32, vocab_size=128256,
                       sequence_length=8192, max_position_embeddings=8192),
}


def setup(sailor_dir):
    sys.path.insert(0, sailor_dir)
    os.chdir(sailor_dir)


def _parent(sailor_dir):
    """The folder Sailor's simulator takes (it reads SAILOR_PATH/sailor/
    sailor/providers/...): the checkout's parent where the checkout is
    named sailor, else a scratch folder with a link of that name."""
    if os.path.basename(sailor_dir) == 'sailor':
        return os.path.dirname(sailor_dir)
    import tempfile
    d = tempfile.mkdtemp()
    os.symlink(sailor_dir, os.path.join(d, 'sailor'))
    return d


def training_config(model, gbs):
    m = dict(MODELS[model])
    m.update(global_batch_size=gbs, type='gpt2', optimizer='Adam', head_dim=m['hidden_size'] // m['heads'],
             num_all_layers=m['num_layers'] + 2)
    return m


def check(path, model, world, sailor_dir):
    from sailor.Planner.simulations.runtime_simulator import convert_homogeneous, Simulator
    with open(path) as f:
        plan = json.load(f)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            tc = training_config(model, plan.get('gbs', 0)) if model in MODELS else {'num_all_layers': 0}
            p = convert_homogeneous(plan, tc)
            gpus = sum(cfg.tmp for pipe in p.pipeline_list for stage in pipe.tmp_configs for cfg in stage)
            if gpus != world:
                raise ValueError('Sailor reads %d GPUs, the plan has %d' % (gpus, world))
            note = 'mbs %d, %d pipeline kind(s), %d GPUs' % (p.mbs, p.num_pipelines, gpus)
    except Exception as e:  # Sailor's own error
        return fail(e)
    if model not in MODELS:
        return 'pass: ' + note + '; no Sailor profile of the model, not simulated'
    with open(os.path.join('sailor', 'Planner', 'llm_info.json')) as f:
        llm_info = json.load(f)
    with open(os.path.join('sailor', 'Planner', 'simulations', 'profiles_tmp.json')) as f:
        profiles = json.load(f)
    # simulate_iteration_time builds a time table per GPU type for the TP
    # degrees among the profile's first-level keys (which are micro-batch
    # sizes), filled from profile[gpu][mbs][tp]; a degree outside it is a
    # KeyError, one without data there counts zero time
    prof = profiles[MODELS[model]['model']]
    missing = sorted({'%s tp %d' % (cfg.vm_list[0].gpu_type, cfg.tmp) for pipe in p.pipeline_list
                      for stage in pipe.tmp_configs for cfg in stage
                      if str(cfg.tmp) not in prof.get(cfg.vm_list[0].gpu_type, {}) or
                      str(cfg.tmp) not in prof[cfg.vm_list[0].gpu_type].get(str(p.mbs), {})})
    if missing:
        return 'pass: %s; its simulator has no time table of %s at mbs %d, not simulated' % (
            note, ', '.join(missing), p.mbs)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            # 16-bit floats (fp16=True): inlay's plans train in bf16 or fp16
            sim = Simulator(_parent(sailor_dir), tc, llm_info, True, profiles, plan['zone'])
            fits = sim.check_config_fits(plan)
            t, _, _ = sim.simulate_iteration_time(plan)
            note += '; its memory model: %s; its iteration time %.2f s' % ('fits' if fits else 'does not fit', t)
    except Exception as e:  # Sailor's own error
        return fail(e)
    return 'pass: ' + note


def fail(e):
    where = traceback.extract_tb(e.__traceback__)[-1]
    return 'fail: %s: %s (%s:%d)' % (type(e).__name__, str(e).strip().replace('\n', ' '),
                                      os.path.relpath(where.filename, sys.path[0]), where.lineno)


def main():
    sailor_dir = os.path.abspath(sys.argv[1])
    items = [(os.path.abspath(i.rsplit(':', 2)[0]),) + tuple(i.rsplit(':', 2)[1:]) for i in sys.argv[2:]]
    setup(sailor_dir)
    for path, model, world in items:
        print('%s\t%s' % (path, check(path, model, int(world), sailor_dir)))
    print('stubbed\t' + ', '.join(stubs.summary()))


if __name__ == '__main__':
    main()
