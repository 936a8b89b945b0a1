"""Export inlay's training plans and run each consumer's own parser on them.

usage: run.py INLAY WORKDIR  (scripts/check-exports.sh runs it)

Environment: MEGATRON_DIR, DEEPSPEED_DIR, TORCHTITAN_DIR, SAILOR_DIR (the
consumers' checkouts; a consumer whose variable is empty is skipped),
PLAN_BUDGET (the baseline planners' search budget, default 5s), ONLY (run
only the cases whose name contains it).

The cases: every scenario of inlay train bench with each planner (inlay,
megatron, metis, amp), then hand-written plans for what the planners do
not pick on those scenarios (ZeRO 0 and 3, the interleaved schedule, full
recomputation, context parallelism, uneven first and last stages, fp16).
Each plan is exported in each form with inlay train simulate --plan ...
--export; a form inlay refuses (e.g. Megatron-LM for a plan with two GPU
types) is listed as refused with inlay's reason. Prints one line per plan
and consumer: the case, the consumer, pass/fail/refused, the message.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

SCENARIO_MODELS = ['opt-350m', 'gpt-neo-2.7b', 'llama-3-8b']
SCENARIO_GPUS = ['32xA100-40,32xV100-16', '128xA100-40,128xV100-16', '256xA100-40,256xV100-16',
                 '32xA100-40,96xV100-16', '64xA100-40,192xV100-16', '128xA100-40']
PLANNERS = ['inlay', 'megatron', 'metis', 'amp']

# compute capability of the GPU types (Megatron's validate_args asks it)
CAPABILITY = {'V100': '7.0', 'A100': '8.0', 'A10': '8.6', 'L4': '8.9', 'L40': '8.9', 'H100': '9.0', 'H200': '9.0',
              'GH': '9.0', 'B200': '10.0'}

# hand-written plans, each fitting inlay's memory model: name, model,
# --gpus, inlay train simulate flags (or a plan file written below)
UNEVEN = """name: uneven
stages:
  - {layers: 0-6}
  - {layers: 7-14}
  - {layers: 15-22}
  - {layers: 23-31}
replicas:
%s
micro_batch: 2
global_batch: 512
recompute: selective
zero: 1
"""
UNEVEN_REPLICA = "  - {batch: 64, gpu: A100-40, tp: 2}\n"
UNEVEN2 = """name: uneven-pp2
stages:
  - {layers: 0-10}
  - {layers: 11-23}
replicas:
%s
micro_batch: 4
global_batch: 1024
zero: 0
"""
UNEVEN2_REPLICA = "  - {batch: 64, gpu: A100-40, tp: 1}\n"

HAND = [
    ('hand: gpt-neo-2.7b 64xA100-40 tp2 pp4 interleaved:2 zero1 full-recompute', 'gpt-neo-2.7b', '64xA100-40',
     ['--tp', '2', '--pp', '4', '--schedule', 'interleaved:2', '--zero', '1', '--recompute', 'full',
      '--micro-batch', '2', '--global-batch', '512']),
    ('hand: opt-350m 32xA100-40 dp32 zero0', 'opt-350m', '32xA100-40',
     ['--zero', '0', '--micro-batch', '4', '--global-batch', '1024']),
    ('hand: opt-350m 32xA100-40 dp32 zero3', 'opt-350m', '32xA100-40',
     ['--zero', '3', '--micro-batch', '4', '--global-batch', '1024']),
    ('hand: gpt-neo-2.7b 32xA100-40 dp16 tp2 zero2 selective', 'gpt-neo-2.7b', '32xA100-40',
     ['--tp', '2', '--zero', '2', '--recompute', 'selective', '--sequence-parallel', '--micro-batch', '2',
      '--global-batch', '512']),
    ('hand: llama-3-8b 64xA100-40 tp2 pp2 cp2 zero1 selective', 'llama-3-8b', '64xA100-40',
     ['--tp', '2', '--pp', '2', '--cp', '2', '--zero', '1', '--recompute', 'selective', '--micro-batch', '1',
      '--global-batch', '256']),
    ('hand: gpt-neo-2.7b 64xA100-40 tp2 pp4 uneven 7/8/8/9 (plan file)', 'gpt-neo-2.7b', '64xA100-40',
     ['--plan', 'uneven.yaml']),
    ('hand: opt-350m 32xA100-40 pp2 uneven 11/13 zero0 (plan file)', 'opt-350m', '32xA100-40',
     ['--plan', 'uneven2.yaml']),
    ('hand: opt-350m 32xV100-16 tp2 pp2 fp16 gpipe full-recompute', 'opt-350m', '32xV100-16',
     ['--tp', '2', '--pp', '2', '--precision', 'fp16', '--schedule', 'gpipe', '--recompute', 'full',
      '--micro-batch', '2', '--global-batch', '64']),
    ('hand: opt-350m 16xA100-40 dp16 zero2 offload', 'opt-350m', '16xA100-40',
     ['--zero', '2', '--offload', '--micro-batch', '2', '--global-batch', '512']),
]

FORMATS = {'megatron': 'args', 'deepspeed': 'json', 'torchtitan': 'toml', 'sailor': 'json'}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def capability(gpu):
    best = '8.0'
    for k, v in CAPABILITY.items():
        if gpu.upper().startswith(k):
            best = v
    return best


def cases(inlay, work):
    budget = os.environ.get('PLAN_BUDGET', '5s')
    only = os.environ.get('ONLY', '')
    out = []
    for m in SCENARIO_MODELS:
        for g in SCENARIO_GPUS:
            for p in PLANNERS:
                name = '%s %s %s' % (m, g, p)
                if only not in name:
                    continue
                path = os.path.join(work, '%s_%s_%s.json' % (m, g.replace(',', '+'), p))
                args = ['train', 'plan', '--model', m, '--gpus', g, '--planner', p, '--json']
                if p != 'inlay':
                    args += ['--budget', budget]
                r = run([inlay] + args)
                if r.returncode != 0:
                    out.append((name, m, g, None, 'no plan: ' + r.stderr.strip().splitlines()[-1]))
                    continue
                with open(path, 'w') as f:
                    f.write(r.stdout)
                out.append((name, m, g, ['--plan', path], None))
    with open(os.path.join(work, 'uneven.yaml'), 'w') as f:
        f.write(UNEVEN % (UNEVEN_REPLICA * 8))
    with open(os.path.join(work, 'uneven2.yaml'), 'w') as f:
        f.write(UNEVEN2 % (UNEVEN2_REPLICA * 16))
    for name, m, g, args in HAND:
        if only in name:
            args = [os.path.join(work, a) if a.endswith('.yaml') else a for a in args]
            out.append((name, m, g, args, None))
    return out


def main():
    inlay, work = sys.argv[1], sys.argv[2]
    dirs = {c: os.environ.get(c.upper() + '_DIR', '') for c in FORMATS}
    rows = []  # (case, consumer, verdict, message)
    items = {c: [] for c in FORMATS}  # consumer: [(case, checker argument)]
    all_cases = cases(inlay, work)
    for i, (name, m, g, args, err) in enumerate(all_cases):
        if err:
            rows.append((name, '-', 'no plan', err))
            continue
        base = [inlay, 'train', 'simulate', '--model', m, '--gpus', g] + args
        rpath = os.path.join(work, 'case%d.ranks.json' % i)
        r = run(base + ['--export', 'ranks', '-o', rpath])
        if r.returncode != 0:
            rows.append((name, 'ranks', 'refused', r.stderr.strip().splitlines()[-1]))
            continue
        with open(rpath) as f:
            ranks = json.load(f)
        world = ranks['world_size']
        dp = len({e['replica'] for e in ranks['ranks']})
        gpu = ranks['ranks'][0]['gpu']
        stages = {}
        for e in ranks['ranks']:
            stages[e['stage']] = e['layers']['last'] - e['layers']['first'] + 1
        layers = ','.join(str(stages[s]) for s in sorted(stages))
        for c, ext in FORMATS.items():
            path = os.path.join(work, 'case%d.%s.%s' % (i, c, ext))
            r = run(base + ['--export', c, '-o', path])
            if r.returncode != 0:
                rows.append((name, c, 'refused', r.stderr.strip().splitlines()[-1].replace('inlay: ', '')))
                continue
            arg = {'megatron': '%s:%d:%s:%s' % (path, world, capability(gpu), layers),
                   'deepspeed': '%s:%d' % (path, dp),
                   'torchtitan': '%s:%d:%s' % (path, world, layers),
                   'sailor': '%s:%s:%d' % (path, m, world)}[c]
            items[c].append((name, arg, path))
    stubbed = {}
    for c, its in items.items():
        if not its:
            continue
        if not dirs[c]:
            for name, _, _ in its:
                rows.append((name, c, 'skipped', '%s_DIR not set' % c.upper()))
            continue
        r = run([os.environ.get('PYTHON', 'python3'), os.path.join(HERE, 'check_%s.py' % c), dirs[c]] +
                [a for _, a, _ in its], cwd=HERE)
        verdicts = {}
        for line in r.stdout.splitlines():
            k, _, v = line.partition('\t')
            if k == 'stubbed':
                stubbed[c] = v
            elif v:
                verdicts[k] = v
        for name, _, path in its:
            v = verdicts.get(os.path.abspath(path)) or verdicts.get(path)
            if v is None:
                tail = (r.stderr.strip().splitlines() or ['no output'])[-1]
                rows.append((name, c, 'error', 'the checker did not answer: ' + tail))
            else:
                verdict, _, msg = v.partition(': ')
                rows.append((name, c, verdict, msg))
    order = {c[0]: i for i, c in enumerate(all_cases)}
    rows.sort(key=lambda r: (order[r[0]], list(FORMATS).index(r[1]) if r[1] in FORMATS else -1))
    for r in rows:
        print('\t'.join(r))
    for c, v in stubbed.items():
        print('stubbed\t%s\t%s' % (c, v))
    counts = {}
    for r in rows:
        counts[r[2]] = counts.get(r[2], 0) + 1
    print('summary\t' + ', '.join('%d %s' % (n, k) for k, n in sorted(counts.items())))
    return 1 if counts.get('fail') or counts.get('error') else 0


if __name__ == '__main__':
    sys.exit(main())
