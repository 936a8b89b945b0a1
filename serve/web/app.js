// inlay serve: the pages. Plain JavaScript, no library; the API is
// described at /api/openapi.yaml.
'use strict';

const $ = (id) => document.getElementById(id);
const pages = ['workload', 'platform', 'plan', 'view', 'compare', 'whatif', 'bench', 'cluster', 'training'];

const state = {
  wl: { name: 'workload.yaml', yaml: '', platform: '' },
  valid: null,        // the last validation (models, groups) or null
  validError: null,   // the last validation error
  plans: [],          // outcomes made for the current workload, in order
  current: null,      // the outcome the plan view and what-if show
  planners: null,     // GET /api/planners
  presets: [],        // GET /api/platforms
  running: null,      // {id, abort} of the running search
};

// ---- helpers ---------------------------------------------------------

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
function fmt(x, d = 3) { return x == null || !isFinite(x) ? '–' : Number(x).toFixed(d); }
function ms(x) {
  if (x == null || !isFinite(x)) return '–';
  if (x >= 1000) return (x / 1000).toPrecision(3) + ' s';
  if (x >= 1 || x === 0) return (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) + ' ms';
  return (x * 1000).toPrecision(3) + ' µs';
}
function pct(x) { return (100 * x).toFixed(1) + ' %'; }
function el(tag, attrs, html) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (html != null) e.innerHTML = html;
  return e;
}
function table(id, head, rows, numeric) {
  const t = typeof id === 'string' ? $(id) : id;
  let h = '<thead><tr>' + head.map((c, i) => `<th scope="col"${numeric && numeric[i] ? ' class="num"' : ''}>${esc(c)}</th>`).join('') + '</tr></thead><tbody>';
  for (const r of rows) h += '<tr>' + r.map((c, i) => `<td${numeric && numeric[i] ? ' class="num"' : ''}>${c}</td>`).join('') + '</tr>';
  t.innerHTML = h + '</tbody>';
  return t;
}

class ApiError extends Error {
  constructor(msg, line, status) { super(msg); this.line = line || 0; this.status = status; }
}

async function api(method, path, body) {
  const opt = { method, headers: {} };
  if (body !== undefined) { opt.headers['Content-Type'] = 'application/json'; opt.body = JSON.stringify(body); }
  const res = await fetch(path, opt);
  const data = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
  if (!res.ok) throw new ApiError(data.error || res.statusText, data.line, res.status);
  return data;
}

// streamPost posts a JSON body and hands each server-sent event to onEvent.
async function streamPost(path, body, onEvent, signal) {
  const res = await fetch(path, {
    method: 'POST', signal,
    headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream' },
    body: JSON.stringify(body),
  });
  if (!res.ok) {
    const e = await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }));
    throw new ApiError(e.error, e.line, res.status);
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const chunk = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let ev = 'message', data = '';
      for (const line of chunk.split('\n')) {
        if (line.startsWith('event: ')) ev = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data) onEvent(ev, JSON.parse(data));
    }
  }
}

function workloadInput(extra) {
  const w = { name: state.wl.name, yaml: state.wl.yaml };
  if (state.wl.platform) w.platform = state.wl.platform;
  return Object.assign(w, extra || {});
}

function save() {
  try { sessionStorage.setItem('inlay.wl', JSON.stringify(state.wl)); } catch (e) { /* private mode */ }
}

function showCurrent() {
  let s = `${state.wl.name}`;
  if (state.valid) s += ` on ${state.valid.platform}`;
  if (state.current) s += ` · plan: ${state.current.planner}, rate ${fmt(state.current.max_rate_scale)}×`;
  $('current').textContent = s;
}

// ---- routing ---------------------------------------------------------

function route() {
  const [page, arg] = (location.hash.slice(1) || 'workload').split('/');
  const name = pages.includes(page) ? page : 'workload';
  for (const p of pages) $('page-' + p).hidden = p !== name;
  for (const a of document.querySelectorAll('header nav a')) {
    if (a.getAttribute('href') === '#' + name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `inlay · ${document.querySelector('#page-' + name + ' h1').textContent}`;
  if (name === 'view') {
    if (arg && (!state.current || state.current.id !== arg)) loadPlan(arg);
    else drawView();
  }
  if (name === 'compare') drawCompare();
  if (name === 'whatif') buildWhatIf();
  return name;
}

async function loadPlan(id) {
  if (state.current && state.current.id === id) { drawView(); return; }
  try {
    const o = await api('GET', '/api/plans/' + encodeURIComponent(id));
    setCurrent(o, false);
  } catch (e) {
    $('view-title').textContent = e.message;
  }
}

// ---- Workload page ---------------------------------------------------

let validateTimer = 0, validateSeq = 0;

function drawGutter(errLine) {
  const n = state.wl.yaml.split('\n').length;
  let h = '';
  for (let i = 1; i <= n; i++) h += i === errLine ? `<span class="err" data-line="${i}">▶${i}</span>` : `<span>${i}</span>`;
  $('gutter').innerHTML = h;
  $('gutter').scrollTop = $('yaml').scrollTop;
}

function scheduleValidate() {
  clearTimeout(validateTimer);
  validateTimer = setTimeout(validate, 300);
}

async function validate() {
  const seq = ++validateSeq;
  $('verdict').innerHTML = '<span class="hint">checking…</span>';
  try {
    const v = await api('POST', '/api/validate', { workload: workloadInput() });
    if (seq !== validateSeq) return;
    state.valid = v; state.validError = null;
    const layers = v.models.reduce((a, m) => a + m.layers, 0);
    $('verdict').innerHTML = `<span class="ok" id="verdict-ok">valid: ${v.models.length} model(s), ${layers} layers, ${v.groups.length} group(s) on ${esc(v.platform)}</span>`;
    drawGutter(0);
    const mt = table(el('table'), ['model', 'source', 'nodes', 'layers', 'params', 'MACs'],
      v.models.map((m, i) => [`<button type="button" class="link" data-inspect="${i}" aria-label="inspect ${esc(m.name)}">${esc(m.name)}</button>`, esc(m.source), m.nodes, m.layers, si(m.params, ''), si(m.macs, 'MAC')]), [0, 0, 1, 1, 1, 1]);
    mt.insertAdjacentHTML('afterbegin', '<caption>Models (select one to inspect it)</caption>');
    for (const b of mt.querySelectorAll('button[data-inspect]')) b.onclick = () => inspectModel(v.models[+b.dataset.inspect]);
    const gt = table(el('table'), ['group', 'models', 'rate', 'deadline', 'arrival'],
      v.groups.map((g) => [esc(g.name), esc(g.models.join(', ')), fmt(g.rate_hz, 2) + ' Hz', ms(g.deadline_ms), esc(g.arrival)]), [0, 0, 1, 1, 0]);
    gt.insertAdjacentHTML('afterbegin', '<caption>Groups</caption>');
    $('wl-tables').replaceChildren(mt, gt, el('div', { id: 'wl-inspect', 'aria-live': 'polite' }));
  } catch (e) {
    if (seq !== validateSeq) return;
    state.valid = null; state.validError = e;
    const mine = e.line && e.message.includes(state.wl.name);
    drawGutter(mine ? e.line : 0);
    let h = `<p class="err errline" id="verdict-error">${esc(e.message)}</p>`;
    if (mine) h += `<button type="button" class="link" id="goto-line">Go to line ${e.line}</button>`;
    $('verdict').innerHTML = h;
    $('wl-tables').replaceChildren();
    if (mine) $('goto-line').onclick = () => gotoLine(e.line);
  }
  showCurrent();
}

// inspectModel shows inlay inspect's summary of one of the workload's models.
async function inspectModel(m) {
  const box = $('wl-inspect');
  box.innerHTML = `<p class="hint">inspecting ${esc(m.name)}…</p>`;
  let r;
  try { r = await api('POST', '/api/inspect', { model: m.ref, inputs: m.inputs }); } catch (e) { box.innerHTML = `<p class="err errline">${esc(e.message)}</p>`; return; }
  const shape = (t) => t.shape ? t.shape.join('×') : (t.dims || []).join('×');
  const ends = table(el('table'), ['', 'name', 'type', 'shape'], [...r.inputs.map((t) => ['input', esc(t.name), esc(t.dtype), esc(shape(t))]), ...r.outputs.map((t) => ['output', esc(t.name), esc(t.dtype), esc(shape(t))])]);
  ends.insertAdjacentHTML('afterbegin', `<caption>${esc(m.name)}: ${esc(r.name)} (IR ${r.ir_version}, opset ${r.opset}; ${r.nodes} nodes, ${r.layers} layers, ${si(r.params, '')} params, ${si(r.macs, 'MAC')}, ${si(r.flops, 'FLOP')}${r.macs_expr ? ', MACs ' + esc(r.macs_expr) : ''})</caption>`);
  const ops = table(el('table'), ['operator', 'count', 'MACs', 'FLOPs', 'params'], r.op_stats.map((o) => [esc(o.op), o.count, si(o.macs, 'MAC'), si(o.flops, 'FLOP'), si(o.params, '')]), [0, 1, 1, 1, 1]);
  ops.insertAdjacentHTML('afterbegin', '<caption>Operators</caption>');
  box.replaceChildren(ends, ops);
}

function gotoLine(n) {
  const ta = $('yaml');
  const lines = ta.value.split('\n');
  let start = 0;
  for (let i = 0; i < n - 1 && i < lines.length; i++) start += lines[i].length + 1;
  ta.focus();
  ta.setSelectionRange(start, start + (lines[n - 1] || '').length);
  ta.scrollTop = Math.max(0, (n - 5) * 18);
}

function si(x, unit) {
  if (!x) return '–';
  const p = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
  for (const [v, s] of p) if (x >= v) return (x / v).toPrecision(3) + ' ' + s + unit;
  return x + (unit ? ' ' + unit : '');
}

function setWorkload(name, yaml, keepPlans) {
  const same = state.wl.yaml === yaml && state.wl.name === name;
  state.wl.name = name; state.wl.yaml = yaml;
  $('wname').value = name;
  $('yaml').value = yaml;
  if (!same && !keepPlans) { state.plans = []; }
  save();
  drawGutter(0);
  validate();
}

async function initWorkload() {
  const ex = await api('GET', '/api/examples');
  const sel = $('example');
  sel.innerHTML = '<option value="">choose…</option>' + ex.map((e) => `<option value="${esc(e.name)}">${esc(e.name)}${e.about ? ' — ' + esc(e.about.slice(0, 60)) : ''}</option>`).join('');
  sel.onchange = async () => {
    if (!sel.value) return;
    const e = await api('GET', '/api/examples/' + encodeURIComponent(sel.value));
    setWorkload(e.name, e.yaml);
  };
  $('upload').onchange = async () => {
    const f = $('upload').files[0];
    if (!f) return;
    if (f.size > 1 << 20) { $('verdict').innerHTML = `<p class="err">${esc(f.name)}: over 1 MiB</p>`; return; }
    const name = /^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$/.test(f.name) ? f.name : 'upload.yaml';
    setWorkload(name, await f.text());
  };
  $('yaml').addEventListener('input', () => { state.wl.yaml = $('yaml').value; state.plans = []; save(); drawGutter(0); scheduleValidate(); });
  $('yaml').addEventListener('scroll', () => { $('gutter').scrollTop = $('yaml').scrollTop; });
  $('wname').addEventListener('change', () => { state.wl.name = $('wname').value.trim() || 'workload.yaml'; save(); validate(); });
  $('wplatform').addEventListener('change', () => { state.wl.platform = $('wplatform').value; state.plans = []; save(); validate(); });
  let saved = null;
  try { saved = JSON.parse(sessionStorage.getItem('inlay.wl') || 'null'); } catch (e) { saved = null; }
  if (saved && saved.yaml) {
    state.wl.platform = saved.platform || '';
    $('wplatform').value = state.wl.platform;
    setWorkload(saved.name, saved.yaml);
  } else {
    const demo = await api('GET', '/api/examples/demo.yaml');
    sel.value = 'demo.yaml';
    setWorkload(demo.name, demo.yaml);
  }
}

// ---- Platform page ---------------------------------------------------

async function initPlatform() {
  state.presets = await api('GET', '/api/platforms');
  const opts = state.presets.map((p) => `<option value="${esc(p.name)}">${esc(p.name)} — ${esc(p.description.slice(0, 50))}</option>`).join('');
  $('plat-pick').innerHTML = opts;
  $('bench-platform').innerHTML = state.presets.map((p) => `<option value="${esc(p.name)}">${esc(p.name)}</option>`).join('');
  $('bench-platform').value = 'phone';
  $('wplatform').insertAdjacentHTML('beforeend', state.presets.map((p) => `<option value="${esc(p.name)}">${esc(p.name)}</option>`).join(''));
  $('plat-pick').onchange = () => showPlatform(() => api('GET', '/api/platforms/' + encodeURIComponent($('plat-pick').value)));
  $('plat-upload').onchange = async () => {
    const f = $('plat-upload').files[0];
    if (!f) return;
    const name = /^[A-Za-z0-9][A-Za-z0-9._-]*\.ya?ml$/.test(f.name) ? f.name : 'platform.yaml';
    const text = await f.text();
    showPlatform(() => api('POST', '/api/platforms', { name, yaml: text }));
  };
  $('plat-pick').value = 'phone';
  showPlatform(() => api('GET', '/api/platforms/phone'));
}

async function showPlatform(get) {
  $('plat-error').textContent = '';
  let p;
  try { p = await get(); } catch (e) { $('plat-error').innerHTML = `<p class="errline">${esc(e.message)}</p>`; $('plat-tables').replaceChildren(); return; }
  const box = $('plat-tables');
  box.innerHTML = `<h2>${esc(p.name)}</h2><p class="lead">${esc(p.description || '')} (source: ${esc(p.source)}; figures are starting points to calibrate)</p>`;
  const procs = table(el('table'), ['processor', 'kind', 'backends', 'data types (peak)', 'memory bandwidth', 'dispatch', 'per layer', 'on-chip', 'concurrency', 'domain'],
    p.processors.map((q) => [esc(q.name), esc(q.kind), esc((q.backends || []).join(', ')), esc(q.dtypes.map((d) => `${d.dtype} ${si(d.peak_gops * 1e9, 'OPS')}`).join(', ')),
      si(q.mem_bandwidth_gbs * 1e9, 'B/s'), esc(q.dispatch_overhead || '0'), esc(q.layer_overhead || '0'), q.on_chip_kib ? si(q.on_chip_kib * 1024, 'B') : '–', q.concurrency, esc(q.domain || '')]),
    [0, 0, 0, 0, 1, 1, 1, 1, 1, 0]);
  procs.insertAdjacentHTML('afterbegin', '<caption>Processors</caption>');
  const sup = table(el('table'), ['processor', 'runs only', 'cannot run', 'max rank', 'max dim', 'max conv kernel', 'max pool window', 'static shapes', 'tensor types'],
    p.processors.map((q) => {
      const s = q.support || {};
      return [esc(q.name), s.ops ? esc(s.ops.join(', ')) : 'any', s.unsupported ? esc(s.unsupported.join(', ')) : '–', s.max_rank || '–', s.max_dim || '–',
        s.max_conv_kernel || '–', s.max_pool_window || '–', s.static_shapes_only ? 'only' : 'any', s.tensor_dtypes ? esc(s.tensor_dtypes.join(', ')) : 'any'];
    }));
  sup.insertAdjacentHTML('afterbegin', '<caption>Operator support</caption>');
  const dom = table(el('table'), ['domain', 'processors', 'description'], p.domains.map((d) => [esc(d.name), esc(d.processors.join(', ')), esc(d.description || '')]));
  dom.insertAdjacentHTML('afterbegin', '<caption>Memory domains</caption>');
  const pl = p.links || [];
  const links = table(el('table'), ['from', 'to', 'bandwidth', 'latency', 'contended'],
    pl.map((l) => [esc(l.from), esc(l.to), si(l.bandwidth_gbs * 1e9, 'B/s'), esc(l.latency || '0'), l.shared ? 'yes (one transfer at a time)' : 'no']), [0, 0, 1, 1, 0]);
  links.insertAdjacentHTML('afterbegin', '<caption>Links</caption>');
  box.append(procs, sup, dom);
  if (pl.length) box.append(links); else box.insertAdjacentHTML('beforeend', '<p>Links: none (all processors share memory without copies).</p>');
}

// ---- Plan page -------------------------------------------------------

function pickedPlanners(fieldset) {
  return [...$(fieldset).querySelectorAll('input[type=checkbox]:checked')].map((c) => c.value);
}

function initPlan() {
  const ps = state.planners.suggested;
  const checks = (prefix, on) => ps.map((p, i) => `<label><input type="checkbox" id="${prefix}-${i}" value="${esc(p)}"${on.includes(p) ? ' checked' : ''}> ${esc(p)}</label>`).join('');
  $('planner-picks').insertAdjacentHTML('beforeend', checks('pp', ['bestmap', 'inlay']));
  $('bench-picks').insertAdjacentHTML('beforeend', checks('bp', ['single:npu', 'bestmap', 'heft', 'puzzle', 'inlay']));
  $('budget').max = state.planners.max_budget_ms / 1000;
  $('run').onclick = () => runPlanners(pickedPlanners('planner-picks'));
  $('cancel').onclick = cancelSearch;
  $('compare-all').onclick = () => { location.hash = '#plan'; runPlanners(ps); };
}

async function cancelSearch() {
  if (!state.running) return;
  state.cancelAll = true;
  if (state.running.id) {
    try { await api('POST', `/api/plan/${state.running.id}/cancel`); } catch (e) { /* it ended meanwhile */ }
  }
}

async function runPlanners(names, whatif) {
  if (state.running) return;
  $('plan-error').textContent = '';
  if (!names.length) { $('plan-error').textContent = 'Pick at least one planner.'; return; }
  const budgetS = Number($('budget').value);
  if (!(budgetS > 0)) { $('plan-error').textContent = 'The budget must be a positive number of seconds.'; return; }
  $('runs').replaceChildren();
  $('run').disabled = true; $('cancel').disabled = false; $('compare-all').disabled = true;
  state.cancelAll = false;
  let best = null;
  for (const name of names) {
    if (state.cancelAll) break;
    const box = el('div', { class: 'run' });
    box.innerHTML = `<h2>${esc(name)}</h2><progress max="1" value="0" aria-label="${esc(name)}: share of the budget used"></progress><p class="prog">starting…</p><p class="res"></p>`;
    $('runs').append(box);
    const prog = box.querySelector('.prog'), bar = box.querySelector('progress'), res = box.querySelector('.res');
    const ctl = new AbortController();
    state.running = { id: null, abort: ctl };
    const body = { workload: workloadInput(), planner: name, budget_ms: Math.round(budgetS * 1000), seed: Number($('seed').value) || 1 };
    if (whatif) body.whatif = whatif;
    try {
      await streamPost('/api/plan', body, (ev, d) => {
        if (ev === 'start') state.running.id = d.id;
        if (ev === 'start' || ev === 'progress') {
          bar.value = d.budget_s > 0 ? Math.min(1, d.elapsed_s / d.budget_s) : 0;
          prog.textContent = `elapsed ${d.elapsed_s.toFixed(1)} s · ${d.evals} evaluations · best ${fmt(d.best_scale)}× · bound ${fmt(d.bound_scale)}×` + (d.note ? ' · ' + d.note : '');
        }
        if (ev === 'result') {
          bar.value = 1;
          d.whatif = whatif || null;
          state.plans.push(d);
          res.innerHTML = `rate scale <strong>${fmt(d.max_rate_scale)}</strong>${d.upper_bound_scale ? ` (${pct(d.max_rate_scale / d.upper_bound_scale)} of the bound)` : ''}, ${d.subgraphs} subgraph(s) in ${d.search_seconds.toFixed(1)} s` +
            (d.cancelled ? ' — cancelled: the best plan so far' : '') + (d.reason ? `<br><span class="err">${esc(d.reason)}</span>` : '') +
            ` · <a href="#view/${esc(d.id)}">open the plan</a>`;
          if (!best || d.max_rate_scale > best.max_rate_scale) best = d;
        }
        if (ev === 'error') res.innerHTML = `<span class="err errline">${esc(d.error)}</span>`;
      }, ctl.signal);
    } catch (e) {
      res.innerHTML = `<span class="err errline">${esc(e.message)}</span>`;
    }
  }
  state.running = null;
  $('run').disabled = false; $('cancel').disabled = true; $('compare-all').disabled = false;
  if (best) setCurrent(best, true);
  return best;
}

function setCurrent(o, announce) {
  // Each span names its work (subgraph or transfer) by index.
  for (const s of o.gantt.spans) { const w = o.gantt.work[s.work]; s.model = w.model; s.layers = w.layers; s.dtype = w.dtype; s.backend = w.backend; s.transfer = !!w.transfer; }
  state.current = o;
  state.whatifFor = null;
  showCurrent();
  if (announce) $('runs').insertAdjacentHTML('beforeend', `<p>Best: ${esc(o.planner)} at ${fmt(o.max_rate_scale)}× — <a href="#view/${esc(o.id)}">open it in the plan view</a>.</p>`);
  if (location.hash.startsWith('#view')) drawView();
}

// ---- Plan view -------------------------------------------------------

const palette = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function luminance(hex) {
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}
function inkOn(bg) { return contrast(bg, '#000000') >= contrast(bg, '#ffffff') ? '#000000' : '#ffffff'; }

let view = null; // the drawn chart: spans, their rects, selection

function drawView() {
  const o = state.current;
  if (!o) return;
  $('view-body').hidden = false;
  $('view-title').textContent = `${o.planner} plan for ${o.workload} on ${o.platform}` + (o.cancelled ? ' (search cancelled: the best plan so far)' : '') +
    (o.whatif ? ' (planned with what-if changes)' : '');
  const bound = o.upper_bound_scale;
  $('bound').innerHTML = `Max sustainable rate scale <strong id="view-scale">${fmt(o.max_rate_scale)}</strong>` +
    (bound != null ? ` of the ${o.upper_bound_proven ? 'proven upper bound' : esc(o.upper_bound_label)} <strong>${fmt(bound)}</strong> (${pct(o.max_rate_scale / bound)}): ${esc(o.upper_bound_why)}` : ' (no bound)') +
    (o.limit ? `<br>Limited by: ${esc(o.limit)}` : '') + (o.reason ? `<br><span class="err">${esc(o.reason)}</span>` : '');
  drawGantt(o);
  table('util', ['processor', 'kind', 'utilisation', 'busy'], o.processors.map((p) =>
    [esc(p.name), esc(p.kind), `<svg width="80" height="10" aria-hidden="true"><rect width="80" height="10" fill="#e5e7eb"></rect><rect width="${(80 * Math.min(1, p.utilisation)).toFixed(1)}" height="10" fill="#0b57d0"></rect></svg> ${pct(p.utilisation)}`, ms(p.busy_ms)]), [0, 0, 1, 1]);
  const nom = {};
  for (const g of o.nominal || []) nom[g.name] = g;
  table('groups', ['group', `rate at ${fmt(o.max_rate_scale)}×`, 'deadline', 'p50', 'p99', 'misses there', 'p99 at nominal', 'misses at nominal'], o.groups.map((g) => {
    const n = nom[g.name] || {};
    return [esc(g.name), fmt(g.rate_hz, 2) + ' Hz', ms(g.deadline_ms), ms(g.p50_ms), ms(g.p99_ms), `${g.late + g.dropped} of ${g.requests}`, ms(n.p99_ms), n.requests != null ? `${n.late + n.dropped} of ${n.requests}` : '–'];
  }), [0, 1, 1, 1, 1, 1, 1, 1]);
  const dl = $('download');
  dl.href = URL.createObjectURL(new Blob([o.plan], { type: 'application/yaml' }));
  dl.download = `plan-${o.planner.replace(/[^A-Za-z0-9]+/g, '-')}.yaml`;
  document.body.dataset.drawn = performance.now().toFixed(1);
  // The next frame has painted the chart.
  requestAnimationFrame(() => setTimeout(() => { document.body.dataset.painted = performance.now().toFixed(1); }, 0));
}

function drawGantt(o) {
  const g = o.gantt;
  const models = [...new Set(g.spans.filter((s) => !s.transfer).map((s) => s.model))].sort();
  const colour = {};
  models.forEach((m, i) => { colour[m] = palette[i % palette.length]; });
  // Sub-lanes: a processor that runs k subgraphs at once gets k rows.
  const rows = [];
  const place = new Array(g.spans.length);
  const order = g.spans.map((s, i) => i).sort((a, b) => g.spans[a].start_ms - g.spans[b].start_ms || a - b);
  for (const i of order) {
    const s = g.spans[i];
    const ends = rows[s.lane] || (rows[s.lane] = []);
    let r = ends.findIndex((e) => e <= s.start_ms + 1e-9);
    if (r < 0) { r = ends.length; ends.push(0); }
    ends[r] = s.end_ms;
    place[i] = r;
  }
  const rowH = 24, left = 120, top = 10, axisH = 28;
  const width = Math.max(700, Math.min(1600, ($('gantt-wrap').clientWidth || 1000) - 4));
  const plotW = width - left - 20;
  const laneY = [];
  let y = top;
  g.lanes.forEach((_, li) => { laneY[li] = y; y += rowH * Math.max(1, (rows[li] || []).length) + 6; });
  const height = y + axisH;
  const xOf = (t) => left + (plotW * t) / g.window_ms;
  // Boxes in drawing order, with where they are (for hover, click, keys).
  const boxes = order.map((i) => {
    const s = g.spans[i];
    const x = xOf(s.start_ms);
    return { i, x, y: laneY[s.lane] + place[i] * rowH + 2, w: Math.max(1, xOf(s.end_ms) - x), h: rowH - 4,
      fill: s.transfer ? '#cbd5e1' : colour[s.model] };
  });
  const byLane = g.lanes.map(() => []);
  boxes.forEach((b, k) => byLane[g.spans[b.i].lane].push(k));
  const cv = $('gantt');
  const dpr = window.devicePixelRatio || 1;
  cv.width = Math.round(width * dpr); cv.height = Math.round(height * dpr);
  cv.style.width = width + 'px'; cv.style.height = height + 'px';
  const nBoxes = g.spans.filter((s) => !s.transfer).length;
  cv.setAttribute('aria-label', `Gantt chart: ${nBoxes} subgraph executions and ${g.spans.length - nBoxes} transfers on ${g.lanes.length} lanes over the first ${fmt(g.window_ms, 1)} ms`);
  cv.dataset.boxes = String(nBoxes);
  cv.dataset.transfers = String(g.spans.length - nBoxes);
  view = { o, boxes, byLane, sel: -1, width, height, dpr, left, top, y, laneY, rowH, xOf, step: tickStep(g.window_ms) };
  paint();
  $('legend').innerHTML = models.map((m) => `<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour[m]}" stroke="#6b7280"></rect></svg> ${esc(m)}</span>`).join('') +
    '<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="#cbd5e1" stroke="#6b7280"></rect></svg> transfer</span>' +
    '<span><svg width="12" height="12" aria-hidden="true"><rect x="1" y="1" width="10" height="10" fill="#ffffff" stroke="#b91c1c" stroke-width="2"></rect></svg> late request</span>';
  $('detail').replaceChildren();
}

// paint draws the chart: grid and time axis, lane names, boxes (labelled
// where the model's name fits, in the ink of higher contrast), the
// selection.
function paint() {
  const v = view, g = v.o.gantt, cv = $('gantt'), c = cv.getContext('2d');
  c.setTransform(v.dpr, 0, 0, v.dpr, 0, 0);
  c.fillStyle = '#ffffff';
  c.fillRect(0, 0, v.width, v.height);
  c.font = '12px system-ui, "DejaVu Sans", sans-serif';
  c.textBaseline = 'middle';
  c.strokeStyle = '#e5e7eb';
  c.lineWidth = 1;
  c.fillStyle = '#4b5563';
  c.textAlign = 'center';
  for (let t = 0; t <= g.window_ms + 1e-9; t += v.step) {
    const x = Math.round(v.xOf(t)) + 0.5;
    c.beginPath(); c.moveTo(x, v.top); c.lineTo(x, v.y); c.stroke();
    c.fillText(`${+t.toFixed(3)} ms`, x, v.y + 14);
  }
  c.fillStyle = '#1b1f24';
  c.textAlign = 'right';
  g.lanes.forEach((name, li) => c.fillText(name, v.left - 8, v.laneY[li] + v.rowH / 2));
  c.textAlign = 'left';
  for (const b of v.boxes) {
    c.fillStyle = b.fill;
    c.fillRect(b.x, b.y, b.w, b.h);
  }
  c.lineWidth = 2;
  c.strokeStyle = '#b91c1c';
  for (const b of v.boxes) if (g.spans[b.i].late) c.strokeRect(b.x + 1, b.y + 1, b.w - 2, b.h - 2);
  for (const b of v.boxes) {
    const s = g.spans[b.i];
    if (s.transfer || b.w < 8 * (s.model.length + 1)) continue;
    c.fillStyle = inkOn(b.fill);
    c.fillText(s.model, b.x + 4, b.y + b.h / 2 + 1);
  }
  if (v.sel >= 0) {
    const b = v.boxes[v.sel];
    c.lineWidth = 3; c.strokeStyle = '#1b1f24';
    c.strokeRect(b.x - 1.5, b.y - 1.5, b.w + 3, b.h + 3);
  }
}

// boxAt is the box under a point of the chart, or -1.
function boxAt(x, y) {
  const v = view;
  for (let li = 0; li < v.byLane.length; li++) {
    for (const k of v.byLane[li]) {
      const b = v.boxes[k];
      if (x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h) return k;
    }
  }
  return -1;
}

function tickStep(span) {
  const raw = span / 8;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function spanText(s, o) {
  const lane = o.gantt.lanes[s.lane];
  if (s.transfer) return `transfer for ${s.model} (layers ${s.layers})\nlink ${lane}\nstart ${ms(s.start_ms)}, duration ${ms(s.end_ms - s.start_ms)}\n${s.group} request ${s.request}${s.late ? ' (late)' : ''}`;
  return `${s.model} layers ${s.layers}\n${lane}${s.dtype ? ', ' + s.dtype : ''}${s.backend ? ' (' + s.backend + ')' : ''}\nstart ${ms(s.start_ms)}, duration ${ms(s.end_ms - s.start_ms)}\n${s.group} request ${s.request}${s.late ? ' (late)' : ''}`;
}

function showDetail(i) {
  const o = view.o, s = o.gantt.spans[i];
  const lane = o.gantt.lanes[s.lane];
  const rows = [['model', s.model], ['layers', s.layers], [s.transfer ? 'link' : 'processor', lane]];
  if (s.dtype) rows.push(['data type', s.dtype]);
  if (s.backend) rows.push(['backend', s.backend]);
  rows.push(['start', ms(s.start_ms)], ['duration', ms(s.end_ms - s.start_ms)], ['request', `${s.group} #${s.request}${s.late ? ' (missed its deadline)' : ''}`]);
  let h = '<dl>' + rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('') + '</dl>';
  const ex = !s.transfer && explained(o, s.model, s.layers);
  if (ex) h += explainHTML(ex);
  $('detail').innerHTML = h;
}

// explained is the plan's explanation of one subgraph (plan --explain).
function explained(o, model, layers) {
  if (!o.explain) return null;
  const m = o.explain.models.find((x) => x.model === model);
  return m ? m.subgraphs.find((x) => x.layers === layers) : null;
}

// explainHTML shows every processor considered for a subgraph: the filter
// that excluded it, or the named scores it got; the chosen one first.
function explainHTML(ex) {
  const names = [];
  for (const c of ex.candidates) for (const sc of c.scores || []) if (!names.includes(sc.name)) names.push(sc.name);
  const val = (c, n) => { const sc = (c.scores || []).find((x) => x.name === n); return sc ? `${+sc.value.toPrecision(4)} ${esc(sc.unit)}` : ''; };
  const rows = [...ex.candidates].sort((a, b) => (b.chosen ? 1 : 0) - (a.chosen ? 1 : 0)).map((c) =>
    [esc(c.processor) + (c.chosen ? ' <strong>(chosen)</strong>' : ''), c.filter ? `excluded by ${esc(c.filter)}: ${esc(c.why)}` : esc(c.config || ''), ...names.map((n) => val(c, n))]);
  const t = table(el('table'), ['processor', 'configuration or filter', ...names], rows, [0, 0, ...names.map(() => 1)]);
  return `<h2>Why ${esc(ex.processor)} (plan --explain)</h2>` + t.outerHTML;
}

function select(k) {
  if (!view || !view.boxes.length) return;
  view.sel = k;
  paint();
  const b = view.boxes[k];
  showDetail(b.i);
  const wrap = $('gantt-wrap');
  if (b.x < wrap.scrollLeft || b.x > wrap.scrollLeft + wrap.clientWidth - 40) wrap.scrollLeft = b.x - 100;
}

function initView() {
  const cv = $('gantt'), tip = $('tip');
  const at = (ev) => { const r = cv.getBoundingClientRect(); return view ? boxAt(ev.clientX - r.left, ev.clientY - r.top) : -1; };
  cv.addEventListener('mousemove', (ev) => {
    const k = at(ev);
    if (k < 0) { tip.hidden = true; cv.style.cursor = ''; return; }
    cv.style.cursor = 'pointer';
    tip.textContent = spanText(view.o.gantt.spans[view.boxes[k].i], view.o);
    // Beside the pointer, kept inside the chart's width.
    const box = $('chart').getBoundingClientRect();
    tip.hidden = false;
    const x = Math.min(ev.clientX - box.left + 14, box.width - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, x) + 'px';
    tip.style.top = (ev.clientY - box.top + 16) + 'px';
  });
  cv.addEventListener('mouseleave', () => { tip.hidden = true; });
  cv.addEventListener('click', (ev) => { const k = at(ev); if (k >= 0) select(k); });
  cv.addEventListener('keydown', (ev) => {
    if (!view || !view.boxes.length) return;
    const v = view, spans = v.o.gantt.spans;
    let next = -1;
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowLeft') {
      const lane = v.sel >= 0 ? spans[v.boxes[v.sel].i].lane : v.byLane.findIndex((l) => l.length);
      const same = v.byLane[lane];
      const at = same.indexOf(v.sel);
      next = v.sel < 0 ? same[0] : same[Math.max(0, Math.min(same.length - 1, at + (ev.key === 'ArrowRight' ? 1 : -1)))];
    } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      const n = v.byLane.length;
      const t = v.sel >= 0 ? spans[v.boxes[v.sel].i].start_ms : 0;
      let lane = v.sel >= 0 ? spans[v.boxes[v.sel].i].lane : -1;
      for (let k = 0; k < n; k++) {
        lane = (lane + (ev.key === 'ArrowDown' ? 1 : n - 1)) % n;
        const cands = v.byLane[lane];
        if (cands.length) { next = cands.reduce((a, b) => (Math.abs(spans[v.boxes[b].i].start_ms - t) < Math.abs(spans[v.boxes[a].i].start_ms - t) ? b : a)); break; }
      }
    } else if (ev.key === 'Escape') {
      v.sel = -1; paint(); $('detail').replaceChildren(); ev.preventDefault(); return;
    } else if (ev.key === 'Enter' || ev.key === ' ') {
      if (v.sel < 0) next = 0; else { showDetail(v.boxes[v.sel].i); ev.preventDefault(); return; }
    } else return;
    ev.preventDefault();
    if (next >= 0) select(next);
  });
}

// ---- Compare ---------------------------------------------------------

function drawCompare() {
  const rows = state.plans.map((o) => [
    `<a href="#view/${esc(o.id)}">${esc(o.planner)}</a>${o.whatif ? ' (what-if)' : ''}${o.cancelled ? ' (cancelled)' : ''}`,
    fmt(o.max_rate_scale), o.upper_bound_scale ? pct(o.max_rate_scale / o.upper_bound_scale) : '–', o.subgraphs, o.search_seconds.toFixed(2) + ' s',
    o.feasible ? '<span class="ok">yes</span>' : '<span class="err">no</span>']);
  table('compare', ['planner', 'rate scale', 'of the bound', 'subgraphs', 'search time', 'sustains the nominal rates'], rows, [0, 1, 1, 1, 1, 0]);
  if (!rows.length) $('compare').insertAdjacentHTML('beforeend', '<tbody><tr><td colspan="6">No plans yet for this workload.</td></tr></tbody>');
}

// ---- What-if ---------------------------------------------------------

let whatifTimer = 0, whatifSeq = 0;

function buildWhatIf() {
  const o = state.current;
  if (!o) return;
  $('whatif-body').hidden = false;
  $('whatif-lead').textContent = `Change the ${o.planner} plan's workload or platform: the plan is re-simulated at once, without a new search.`;
  if (state.whatifFor === o.id) return;
  state.whatifFor = o.id;
  const groups = (state.valid && state.valid.groups) || [];
  $('whatif-groups').innerHTML = '<legend>Groups</legend>' + groups.map((g, i) => `<div class="whatif-row"><span class="name">${esc(g.name)}</span>
    <div class="field"><label for="wi-rate-${i}">rate (Hz)</label><input id="wi-rate-${i}" data-group="${esc(g.name)}" data-kind="rate" type="number" min="0.01" step="any" value="${+g.rate_hz.toFixed(4)}" data-orig="${+g.rate_hz.toFixed(4)}"></div>
    <div class="field"><label for="wi-dl-${i}">deadline (ms)</label><input id="wi-dl-${i}" data-group="${esc(g.name)}" data-kind="deadline" type="number" min="0.01" step="any" value="${+g.deadline_ms.toFixed(3)}" data-orig="${+g.deadline_ms.toFixed(3)}"></div></div>`).join('');
  $('whatif-procs').innerHTML = '<legend>Processors</legend>' + o.processors.map((p, i) => `<div class="whatif-row"><span class="name">${esc(p.name)}</span>
    <div class="field"><label for="wi-speed-${i}">speed (%)</label><input id="wi-speed-${i}" data-proc="${esc(p.name)}" data-kind="speed" type="number" min="1" max="10000" step="any" value="100" data-orig="100"></div>
    <div class="field"><label for="wi-on-${i}"><input id="wi-on-${i}" data-proc="${esc(p.name)}" data-kind="on" type="checkbox" checked> available</label></div></div>`).join('');
  for (const inp of $('whatif-form').querySelectorAll('input')) inp.addEventListener('input', () => {
    // A deadline that equalled the period follows a new rate (as in the file), until it is edited.
    if (inp.dataset.kind === 'rate') {
      const dl = inp.closest('.whatif-row').querySelector('input[data-kind=deadline]');
      const followed = Math.abs(Number(dl.dataset.orig) - 1000 / Number(inp.dataset.orig)) < 1e-3;
      if (followed && !dl.dataset.edited && Number(inp.value) > 0) dl.value = +(1000 / Number(inp.value)).toFixed(3);
    }
    if (inp.dataset.kind === 'deadline') inp.dataset.edited = '1';
    clearTimeout(whatifTimer); whatifTimer = setTimeout(whatIf, 250);
  });
  $('whatif-result').replaceChildren();
  whatIf();
}

function whatIfChanges() {
  const wi = { groups: [], processors: [] };
  const groups = {}, procs = {};
  for (const inp of $('whatif-form').querySelectorAll('input')) {
    if (inp.dataset.group) {
      const g = groups[inp.dataset.group] || (groups[inp.dataset.group] = { name: inp.dataset.group });
      const v = Number(inp.value);
      if (inp.value !== inp.dataset.orig && v > 0) {
        if (inp.dataset.kind === 'rate') g.rate_hz = v; else g.deadline_ms = v;
      }
    } else if (inp.dataset.proc) {
      const p = procs[inp.dataset.proc] || (procs[inp.dataset.proc] = { name: inp.dataset.proc });
      if (inp.dataset.kind === 'speed' && inp.value !== inp.dataset.orig && Number(inp.value) > 0) p.speed = Number(inp.value) / 100;
      if (inp.dataset.kind === 'on' && !inp.checked) p.off = true;
    }
  }
  for (const k in groups) if (groups[k].rate_hz || groups[k].deadline_ms) wi.groups.push(groups[k]);
  for (const k in procs) if (procs[k].speed || procs[k].off) wi.processors.push(procs[k]);
  return wi;
}

async function whatIf() {
  const o = state.current, seq = ++whatifSeq;
  const wi = whatIfChanges();
  $('whatif-error').textContent = '';
  const t0 = performance.now();
  let after;
  try {
    after = await api('POST', '/api/simulate', { workload: workloadInput(), plan: o.plan, seed: Number($('seed').value) || 1, whatif: wi });
  } catch (e) {
    if (seq !== whatifSeq) return;
    $('whatif-error').innerHTML = `<p class="errline" id="whatif-message">${esc(e.message)}</p>`;
    $('whatif-result').replaceChildren();
    return;
  }
  if (seq !== whatifSeq) return;
  const took = performance.now() - t0;
  const base = o.whatif ? null : o;
  const before = base || o;
  const delta = (a, b, d, unit, higherBetter) => {
    if (a == null || b == null) return '–';
    const x = b - a;
    if (Math.abs(x) < 10 ** -d / 2) return '±0';
    const good = higherBetter ? x > 0 : x < 0;
    return `<span class="${good ? 'up' : 'down'}">${x > 0 ? '+' : '−'}${Math.abs(x).toFixed(d)}${unit}</span>`;
  };
  const rows = [['max rate scale', fmt(before.max_rate_scale), `<strong id="whatif-scale">${fmt(after.max_rate_scale)}</strong>`, delta(before.max_rate_scale, after.max_rate_scale, 3, '×', true)]];
  const bn = {}, an = {};
  for (const g of before.nominal || []) bn[g.name] = g;
  for (const g of after.nominal || []) an[g.name] = g;
  after.groups.forEach((g, i) => {
    const b = before.groups[i] || {};
    rows.push([`${esc(g.name)}: rate at the max scale`, fmt(b.rate_hz, 2) + ' Hz', `<span id="whatif-rate-${esc(g.name)}">${fmt(g.rate_hz, 2)} Hz</span>`, delta(b.rate_hz, g.rate_hz, 2, ' Hz', true)]);
    const bb = bn[g.name] || {}, aa = an[g.name] || {};
    rows.push([`${esc(g.name)}: p99 latency at the nominal rate`, ms(bb.p99_ms), ms(aa.p99_ms), delta(bb.p99_ms, aa.p99_ms, 2, ' ms', false)]);
    rows.push([`${esc(g.name)}: missed deadlines at the nominal rate`, bb.requests != null ? `${bb.late + bb.dropped} of ${bb.requests}` : '–', aa.requests != null ? `${aa.late + aa.dropped} of ${aa.requests}` : '–', '']);
  });
  const t = table(el('table', { id: 'whatif-table' }), ['', 'plan as made', 'with the changes', 'change'], rows, [0, 1, 1, 1]);
  const note = el('p', { class: 'hint' });
  note.textContent = `Re-simulated in ${took.toFixed(0)} ms (no search).` + (after.reason ? ' ' + after.reason : '');
  $('whatif-result').replaceChildren(t, note);
  document.body.dataset.whatif = String(seq);
}

function initWhatIf() {
  $('whatif-reset').onclick = () => {
    for (const inp of $('whatif-form').querySelectorAll('input')) { if (inp.type === 'checkbox') inp.checked = true; else inp.value = inp.dataset.orig; delete inp.dataset.edited; }
    whatIf();
  };
  $('replan').onclick = async () => {
    const o = state.current;
    location.hash = '#plan';
    const wi = whatIfChanges();
    await runPlanners([o.planner], wi);
  };
}

// ---- Bench -----------------------------------------------------------

function initBench() {
  let ctl = null;
  $('bench-run').onclick = async () => {
    const planners = pickedPlanners('bench-picks');
    $('bench-error').textContent = '';
    if (!planners.length) { $('bench-error').textContent = 'Pick at least one planner.'; return; }
    const head = ['#', 'models', ...planners, 'bound'];
    const rows = [];
    table('bench-table', head, rows);
    $('bench-summary').replaceChildren();
    ctl = new AbortController();
    $('bench-run').disabled = true; $('bench-stop').disabled = false;
    const body = { scenarios: Number($('bench-n').value), planners, budget_ms: Math.round(Number($('bench-budget').value) * 1000),
      seed: Number($('bench-seed').value) || 1, platform: $('bench-platform').value };
    try {
      await streamPost('/api/bench', body, (ev, d) => {
        if (ev === 'progress') $('bench-status').textContent = `scenario ${d.scenario + 1} of ${d.scenarios}: ${d.name}…`;
        if (ev === 'scenario') {
          rows.push([d.index, `<span title="${esc(d.models.join(', '))}">${d.models.length}</span>`, ...d.results.map((r) => (r.error ? `<span class="err" title="${esc(r.error)}">error</span>` : fmt(r.max_rate_scale))), fmt(d.upper_bound_scale)]);
          table('bench-table', head, rows, head.map(() => true));
        }
        if (ev === 'result') {
          $('bench-status').textContent = `done: ${d.scenarios.length} scenario(s) on ${d.platform}`;
          const s = table('bench-summary', ['planner', 'vs single:npu', 'vs bestmap', 'of the bound', 'search s'], d.planners.map((p) => {
            const m = d.summary[p];
            return [esc(p), m.counted_vs_single_npu ? `${m.geomean_vs_single_npu.toFixed(2)}× (n=${m.counted_vs_single_npu})` : '–',
              m.counted_vs_bestmap ? `${m.geomean_vs_bestmap.toFixed(2)}× (n=${m.counted_vs_bestmap})` : '–', fmt(m.mean_fraction_of_bound), m.mean_search_seconds.toFixed(2)];
          }), [0, 1, 1, 1, 1]);
          s.insertAdjacentHTML('afterbegin', '<caption>Summary: geometric-mean ratios over the scenarios where the baseline sustains a positive rate</caption>');
        }
        if (ev === 'error') $('bench-error').innerHTML = `<p class="errline">${esc(d.error)}</p>`;
      }, ctl.signal);
    } catch (e) {
      if (e.name === 'AbortError') $('bench-status').textContent = 'stopped';
      else $('bench-error').innerHTML = `<p class="errline">${esc(e.message)}</p>`;
    }
    $('bench-run').disabled = false; $('bench-stop').disabled = true;
  };
  $('bench-stop').onclick = () => { if (ctl) ctl.abort(); };
}

// ---- Cluster ---------------------------------------------------------

async function initCluster() {
  const info = await api('GET', '/api/cluster');
  $('cl-cluster').innerHTML = info.clusters.map((c) => `<option value="${esc(c.name)}">${esc(c.name)} — ${esc(c.about)}</option>`).join('');
  $('cl-policy').innerHTML = info.policies.map((p) => `<option value="${esc(p.name)}">${esc(p.name)}</option>`).join('');
  $('cl-policy').value = 'gavel';
  let ctl = null, trace = null;
  $('cl-trace').onchange = async () => {
    const f = $('cl-trace').files[0];
    trace = f ? { name: /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(f.name) ? f.name : 'trace.jsonl', text: await f.text() } : null;
  };
  $('cl-run').onclick = async () => {
    $('cl-error').textContent = '';
    const body = { cluster: $('cl-cluster').value, policy: $('cl-policy').value, seed: Number($('cl-seed').value) || 0 };
    if (trace) { body.trace = trace.text; body.trace_name = trace.name; } else body.generate = { jobs: Number($('cl-jobs').value), rate_per_hour: Number($('cl-rate').value), seed: Number($('cl-seed').value) || 0 };
    ctl = new AbortController();
    $('cl-run').disabled = true; $('cl-stop').disabled = false;
    $('cl-status').textContent = 'simulating…';
    const t0 = performance.now();
    try {
      await streamPost('/api/cluster/simulate', body, (ev, d) => {
        if (ev === 'progress') $('cl-status').textContent = `simulating: ${d.done} of ${d.total} jobs done`;
        if (ev === 'result') { $('cl-status').textContent = `done in ${((performance.now() - t0) / 1000).toFixed(1)} s`; drawCluster(d); }
        if (ev === 'error') $('cl-error').innerHTML = `<p class="errline">${esc(d.error)}</p>`;
      }, ctl.signal);
    } catch (e) {
      if (e.name === 'AbortError') $('cl-status').textContent = 'stopped';
      else $('cl-error').innerHTML = `<p class="errline">${esc(e.message)}</p>`;
    }
    $('cl-run').disabled = false; $('cl-stop').disabled = true;
  };
  $('cl-stop').onclick = () => { if (ctl) ctl.abort(); };
}

function drawCluster(r) {
  $('cl-result').hidden = false;
  const rows = [['policy', esc(r.policy)], ['cluster', esc(r.cluster)], ['jobs measured', `${r.jobs} (IDs ${r.window[0]}–${r.window[1]})${r.unfinished ? `, ${r.unfinished} unfinished` : ''}`],
    ['average JCT', fmt(r.avg_jct_hours, 2) + ' h'], ['p50 / p90 / p99 JCT', `${fmt(r.p50_jct_hours, 2)} / ${fmt(r.p90_jct_hours, 2)} / ${fmt(r.p99_jct_hours, 2)} h`],
    ['makespan', fmt(r.makespan_hours, 2) + ' h'], ['finish-time fairness ρ', `avg ${fmt(r.avg_ftf, 2)}, max ${fmt(r.max_ftf, 2)}`],
    ['rounds, allocations, preemptions', `${r.rounds}, ${r.recomputes}, ${r.preemptions}`]];
  for (const g of Object.keys(r.utilization || {}).sort()) rows.push(['utilisation ' + esc(g), pct(r.utilization[g])]);
  table('cl-metrics', ['metric', 'value'], rows, [0, 1]);
  // JCT CDF: an SVG step line.
  const j = r.jct_hours, W = 420, H = 260, L = 50, B = 36, T = 10, R = 14;
  const maxX = j.length ? j[j.length - 1] : 1;
  const x = (v) => L + ((W - L - R) * v) / (maxX || 1), y = (p) => H - B - (H - B - T) * p;
  let path = `M${x(0)},${y(0)}`;
  j.forEach((v, i) => { path += ` L${x(v).toFixed(1)},${y(i / j.length).toFixed(1)} L${x(v).toFixed(1)},${y((i + 1) / j.length).toFixed(1)}`; });
  let h = `<line x1="${L}" y1="${y(0)}" x2="${W - R}" y2="${y(0)}" stroke="#4b5563"></line><line x1="${L}" y1="${y(0)}" x2="${L}" y2="${T}" stroke="#4b5563"></line>`;
  for (const p of [0, 0.25, 0.5, 0.75, 1]) h += `<text x="${L - 6}" y="${y(p) + 4}" text-anchor="end" fill="#1b1f24" font-size="12">${p}</text>`;
  const step = tickStep(maxX);
  for (let v = 0; v <= maxX + 1e-9; v += step) h += `<text x="${x(v)}" y="${H - B + 16}" text-anchor="middle" fill="#1b1f24" font-size="12">${+v.toFixed(2)}</text>`;
  h += `<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle" fill="#1b1f24" font-size="12">JCT (hours)</text>`;
  h += `<path d="${path}" fill="none" stroke="#0b57d0" stroke-width="2"></path>`;
  $('cl-cdf').innerHTML = h;
  $('cl-cdf').setAttribute('aria-label', `JCT CDF of ${j.length} jobs: median ${fmt(r.p50_jct_hours, 2)} h, p99 ${fmt(r.p99_jct_hours, 2)} h`);
  // Timeline: a canvas, one row per job.
  const jobs = r.timeline, types = Object.keys(r.gpu_count || {}).sort();
  const colour = {};
  types.forEach((t, i) => { colour[t] = palette[i % palette.length]; });
  const rowH = 6, left = 60, top = 8, width = Math.max(700, Math.min(1400, ($('cl-wrap').clientWidth || 1000) - 4));
  let end = 0;
  for (const jl of jobs) end = Math.max(end, jl.finish_h, ...jl.spans.map((s) => s.end_h));
  const height = top + rowH * jobs.length + 30;
  const cv = $('cl-timeline'), dpr = window.devicePixelRatio || 1;
  cv.width = Math.round(width * dpr); cv.height = Math.round(height * dpr);
  cv.style.width = width + 'px'; cv.style.height = height + 'px';
  const c = cv.getContext('2d');
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  c.fillStyle = '#ffffff'; c.fillRect(0, 0, width, height);
  const X = (t) => left + ((width - left - 16) * t) / (end || 1);
  c.font = '12px system-ui, "DejaVu Sans", sans-serif'; c.textBaseline = 'middle';
  const tstep = tickStep(end || 1);
  c.textAlign = 'center'; c.fillStyle = '#4b5563'; c.strokeStyle = '#e5e7eb';
  for (let t = 0; t <= end + 1e-9; t += tstep) { const xx = Math.round(X(t)) + 0.5; c.beginPath(); c.moveTo(xx, top); c.lineTo(xx, height - 24); c.stroke(); c.fillText(`${+t.toFixed(2)} h`, xx, height - 12); }
  jobs.forEach((jl, k) => {
    const yy = top + k * rowH;
    c.fillStyle = '#9ca3af';
    c.fillRect(X(jl.arrival_h), yy + rowH / 2 - 0.5, X(jl.finish_h >= 0 ? jl.finish_h : end) - X(jl.arrival_h), 1);
    for (const sp of jl.spans) { c.fillStyle = colour[sp.gpu] || '#6b7280'; c.fillRect(X(sp.start_h), yy + 1, Math.max(1, X(sp.end_h) - X(sp.start_h)), rowH - 2); }
  });
  c.fillStyle = '#1b1f24'; c.textAlign = 'right';
  if (jobs.length) { c.fillText(`job ${jobs[0].id}`, left - 6, top + 4); c.fillText(`job ${jobs[jobs.length - 1].id}`, left - 6, top + rowH * jobs.length - 2); }
  cv.setAttribute('aria-label', `timeline of ${jobs.length} jobs over ${fmt(end, 1)} hours`);
  cv.dataset.jobs = String(jobs.length);
  $('cl-legend').innerHTML = types.map((t) => `<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour[t]}" stroke="#6b7280"></rect></svg> ${esc(t)}</span>`).join(' ');
}

// ---- Training --------------------------------------------------------

const training = { info: null, answer: null, chosen: -1, ctl: null };
const trainKinds = { forward: '#4e79a7', backward: '#f28e2b', 'grad-sync': '#76b7b2', optimizer: '#b07aa1' };
const memParts = [['parameters', '#4e79a7'], ['gradients', '#59a14f'], ['optimizer', '#f28e2b'], ['activations', '#e15759'], ['buffers', '#76b7b2'], ['allocator', '#bab0ac']];

function gb(bytes) { return bytes == null || !isFinite(bytes) ? '–' : (bytes / 1e9).toFixed(bytes >= 1e10 ? 1 : 2) + ' GB'; }
function secs(s) { return s == null || !isFinite(s) ? '–' : s >= 1 ? s.toFixed(3) + ' s' : ms(s * 1000); }
function swatch(colour, name) { return `<span><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour}" stroke="#6b7280"></rect></svg> ${esc(name)}</span>`; }

async function initTraining() {
  const info = await api('GET', '/api/train/models');
  training.info = info;
  $('tr-model').innerHTML = `<optgroup label="Transformers">${info.models.map((m) => `<option value="${esc(m.name)}">${esc(m.name)} (${m.layers} layers, hidden ${m.hidden}, seq ${m.seq})</option>`).join('')}</optgroup>` +
    `<optgroup label="Graph networks (input per sample)">${(info.networks || []).map((n) => `<option value="${esc(n.name)}">${esc(n.name)} (${esc(n.input)}${n.fixed ? ' only' : ''})</option>`).join('')}</optgroup>`;
  $('tr-model').value = info.models.some((m) => m.name === 'gpt-neo-2.7b') ? 'gpt-neo-2.7b' : info.models[0].name;
  $('tr-planners').insertAdjacentHTML('beforeend', info.planners.map((p, i) => `<label><input type="checkbox" id="tp-${i}" value="${esc(p)}" checked> ${esc(p)}</label>`).join(''));
  $('tr-types').textContent = `GPU types: ${info.gpus.map((g) => `${g.name} (${g.memory_gb} GB)`).join(', ')}; at most ${info.max_gpus} GPUs.`;
  $('tr-budget').max = info.max_budget_ms / 1000;
  $('tr-run').onclick = runTraining;
  $('tr-stop').onclick = () => { if (training.ctl) training.ctl.abort(); };
}

// trainRequest reads the form; it throws a message for a field it cannot read.
function trainRequest() {
  const num = (id) => Number($(id).value) || 0;
  const body = { model: $('tr-model-line').value.trim() || $('tr-model').value, gpus: $('tr-gpus').value.replace(/\s+/g, ''), gpus_per_node: num('tr-per-node'), objective: $('tr-objective').value,
    planners: pickedPlanners('tr-planners'), global_batch: num('tr-batch'), max_gpus: num('tr-max-gpus'), max_dollars_per_hour: num('tr-max-dollars'),
    tokens: num('tr-tokens'), budget_ms: Math.round(num('tr-budget') * 1000) };
  const input = $('tr-input').value.trim();
  if (input) body.input = input;
  if (!body.planners.length) throw new Error('Pick at least one planner.');
  const prices = $('tr-prices').value.trim();
  if (prices) {
    body.prices = {};
    for (const kv of prices.split(',')) {
      const [k, v] = kv.split('=').map((x) => x.trim());
      if (!k || !(Number(v) > 0)) throw new Error(`Prices: "${kv.trim()}" is not TYPE=DOLLARS_PER_GPU_HOUR.`);
      body.prices[k] = Number(v);
    }
  }
  return body;
}

async function runTraining() {
  $('tr-error').textContent = '';
  let body;
  try { body = trainRequest(); } catch (e) { $('tr-error').innerHTML = `<p class="errline">${esc(e.message)}</p>`; return; }
  $('tr-run').disabled = true; $('tr-stop').disabled = false;
  training.chosen = -1;
  $('tr-plan').hidden = true;
  $('tr-status').textContent = `planning with ${body.planners.join(', ')}…`;
  const t0 = performance.now(), partial = { model: body.model, cluster: body.gpus, gpus: null, plans: [] };
  training.ctl = new AbortController();
  try {
    await streamPost('/api/train/plan', body, (ev, d) => {
      if (ev === 'planner') {
        partial.plans.push(d.planner);
        const next = body.planners[d.index + 1];
        $('tr-status').textContent = `${d.index + 1} of ${body.planners.length} planner(s) done` + (next ? `; ${next} is planning…` : '');
        training.answer = partial;
        drawTrainTable(partial);
      }
      if (ev === 'result') {
        $('tr-status').textContent = `${d.plans.length} planner(s) in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
        training.answer = d;
        drawTrainTable(d);
        showTrainPlan(bestPlan(d, body.objective));
      }
      if (ev === 'error') $('tr-error').innerHTML = `<p class="errline" id="tr-message">${esc(d.error)}</p>`;
    }, training.ctl.signal);
  } catch (e) {
    if (e.name === 'AbortError') $('tr-status').textContent = 'stopped';
    else { $('tr-status').textContent = ''; $('tr-error').innerHTML = `<p class="errline" id="tr-message">${esc(e.message)}</p>`; }
  }
  $('tr-run').disabled = false; $('tr-stop').disabled = true;
}

// bestPlan is the index of the plan the objective prefers.
function bestPlan(a, objective) {
  let best = -1;
  const score = (f) => (objective === 'cost' && f.dollars_per_million_tokens ? -f.dollars_per_million_tokens : f.tokens_per_s);
  a.plans.forEach((p, i) => { if (p.result && (best < 0 || score(p.result) > score(a.plans[best].result))) best = i; });
  return best;
}

function planShape(p) {
  if (p.groups && p.groups.length) {
    const ranks = p.groups.flatMap((g) => g.ranks);
    const gtypes = [...new Set(ranks.map((r) => r.gpu))].join(' + ');
    const dps = p.groups.map((g) => g.ranks.reduce((n, r) => n + r.count, 0)).join('/');
    const gtps = [...new Set(ranks.map((r) => r.tp))].join('/');
    return `${gtypes}: pp ${p.stages.length}, stages of dp ${dps} (each its own), tp ${gtps}, micro-batch ${p.micro_batch} shared by each stage's ranks, recompute ${p.recompute}, ZeRO ${p.zero}`;
  }
  const tps = [...new Set(p.replicas.flatMap((r) => r.stages.map((s) => s.tp)))].join('/');
  const types = [...new Set(p.replicas.flatMap((r) => r.stages.map((s) => s.gpu)))].join(' + ');
  // replicas may run micro-batches and recomputation of their own
  const mbs = [...new Set(p.replicas.map((r) => r.micro_batch || p.micro_batch))].join('/');
  const rcs = [...new Set(p.replicas.map((r) => r.recompute || p.recompute))].join('/');
  return `${types}: pp ${p.stages.length} × dp ${p.replicas.length}, tp ${tps}, micro-batch ${mbs}, recompute ${rcs}, ZeRO ${p.zero}`;
}

// drawTrainTable draws the planners' table: the rows so far, or all.
function drawTrainTable(a) {
  $('tr-result').hidden = false;
  const cost = a.plans.some((p) => p.result && p.result.dollars_per_million_tokens);
  const head = ['planner', 'tokens/s', 'of the bound', 'iteration', 'search', 'GPUs', 'peak memory', 'fits (headroom)', ...(cost ? ['$ per M tokens'] : []), 'plan'];
  const rows = a.plans.map((p, i) => {
    const name = `<button type="button" class="link" data-plan="${i}" aria-label="show the ${esc(p.planner)} plan">${esc(p.planner)}</button>`;
    if (!p.result) return [esc(p.planner), `<span class="err">${esc(p.error)}</span>`, '', '', '', '', '', '', ...(cost ? [''] : []), ''];
    const f = p.result;
    return [name, si(f.tokens_per_s, ''), pct(f.fraction_of_bound), secs(f.iteration_s), secs(f.search_seconds), f.gpus, gb(f.peak_memory_bytes),
      f.fits ? `yes (${gb(f.headroom_bytes)})` : '<span class="err">no</span>', ...(cost ? [f.dollars_per_million_tokens ? '$' + fmt(f.dollars_per_million_tokens, 3) : '–'] : []), esc(planShape(f.plan))];
  });
  const t = table('tr-table', head, rows, head.map((h, i) => i > 0 && i < head.length - 1));
  const bound = a.plans.find((p) => p.result);
  t.insertAdjacentHTML('afterbegin', `<caption>${esc(a.model)} on ${esc(a.cluster)}${a.gpus ? ` (${a.gpus} GPUs)` : ''}: the planners side by side; the bound is ${bound ? si(bound.result.bound_tokens_per_s, '') : '–'} tokens/s. Select a planner to draw its plan.</caption>`);
  for (const b of t.querySelectorAll('button[data-plan]')) b.onclick = () => showTrainPlan(+b.dataset.plan);
  t.querySelectorAll('tbody tr').forEach((tr, k) => tr.setAttribute('aria-current', String(k === training.chosen)));
}

function showTrainPlan(i) {
  const a = training.answer, p = a.plans[i];
  if (!p || !p.result) return;
  training.chosen = i;
  $('tr-plan').hidden = false;
  $('tr-table').querySelectorAll('tbody tr').forEach((tr, k) => tr.setAttribute('aria-current', String(k === i)));
  const f = p.result, tl = p.timeline;
  $('tr-title').textContent = `The ${p.planner} plan`;
  let info = `${esc(planShape(f.plan))}; ${f.plan.global_batch} sequences a batch, ${esc(f.plan.precision)}, schedule ${esc(f.plan.schedule.kind)}. ` +
    `${si(f.tokens_per_s, '')} tokens/s, ${pct(f.fraction_of_bound)} of the bound; pipeline bubble ${pct(tl.bubble)}.`;
  if (f.explain && f.explain.binding) info += ` Binding: ${esc(f.explain.binding)}.`;
  if (tl.shown.length < tl.replicas) info += ` The charts show ${tl.shown.length} of the ${tl.replicas} replicas: ${tl.shown.map((r, k) => `replica ${r} stands for ${tl.like[k]}`).join(', ')}${tl.truncated ? ' (some left out)' : ''}.`;
  $('tr-info').innerHTML = info;
  drawTrainGantt(tl);
  drawTrainMemory(tl);
}

function stageName(st, tl) {
  if (st.ranks) return `s${st.stage} ${st.ranks}× ${st.gpu}×${st.tp}`;
  const k = tl.shown.indexOf(st.replica);
  return `r${st.replica} s${st.stage} ${st.gpu}×${st.tp}` + (tl.like[k] > 1 ? ` (${tl.like[k]} alike)` : '');
}

// drawTrainGantt draws one iteration as an SVG Gantt: a row per stage of
// each shown replica, a box per task coloured by its kind.
function drawTrainGantt(tl) {
  const rowOf = {};
  tl.stages.forEach((st, k) => { rowOf[st.replica + '/' + st.stage] = k; });
  const rowH = 22, left = 190, top = 8, axisH = 26;
  const width = Math.max(700, Math.min(1600, ($('tr-gantt-wrap').clientWidth || 1000) - 4));
  const height = top + rowH * tl.stages.length + axisH;
  const end = tl.iteration_s * 1000 || 1, x = (s) => left + ((width - left - 16) * s * 1000) / end;
  let h = '';
  const step = tickStep(end);
  for (let t = 0; t <= end + 1e-9; t += step) {
    const xx = x(t / 1000).toFixed(1);
    h += `<line x1="${xx}" y1="${top}" x2="${xx}" y2="${height - axisH}" stroke="#e5e7eb"></line><text x="${xx}" y="${height - 8}" text-anchor="middle" fill="#4b5563" font-size="12">${t === 0 ? '0' : esc(ms(t))}</text>`;
  }
  tl.stages.forEach((st, k) => { h += `<text x="${left - 8}" y="${top + k * rowH + rowH / 2 + 4}" text-anchor="end" fill="#1b1f24" font-size="12">${esc(stageName(st, tl))}</text>`; });
  let bars = 0;
  for (const sp of tl.spans) {
    const k = rowOf[sp.replica + '/' + sp.stage];
    if (k == null) continue;
    const fill = trainKinds[sp.kind] || '#6b7280', bx = x(sp.start_s), bw = Math.max(1, x(sp.end_s) - bx), by = top + k * rowH + 2;
    const label = sp.kind === 'forward' ? `F${sp.micro_batch}` : sp.kind === 'backward' ? `B${sp.micro_batch}` : '';
    const what = `${sp.kind}${label ? ' of micro-batch ' + sp.micro_batch : ''}${sp.chunk ? ', chunk ' + sp.chunk : ''}: replica ${sp.replica}, stage ${sp.stage}, ${ms(sp.start_s * 1000)} to ${ms(sp.end_s * 1000)}`;
    h += `<rect x="${bx.toFixed(2)}" y="${by}" width="${bw.toFixed(2)}" height="${rowH - 4}" fill="${fill}" data-kind="${sp.kind}"><title>${esc(what)}</title></rect>`;
    if (label && bw >= 8 * label.length + 4) h += `<text x="${(bx + 3).toFixed(1)}" y="${by + rowH / 2 + 2}" fill="${inkOn(fill)}" data-bg="${fill}" font-size="11" pointer-events="none">${label}</text>`;
    bars++;
  }
  const svg = $('tr-gantt');
  svg.setAttribute('width', width); svg.setAttribute('height', height);
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('aria-label', `Pipeline Gantt of one iteration (${secs(tl.iteration_s)}): ${bars} tasks on ${tl.stages.length} stage rows`);
  svg.innerHTML = h;
  svg.dataset.bars = String(bars);
  const kinds = new Set(tl.spans.map((s) => s.kind));
  $('tr-legend').innerHTML = Object.keys(trainKinds).filter((k) => kinds.has(k)).map((k) => swatch(trainKinds[k], k)).join('');
}

// drawTrainMemory draws each stage's memory per GPU as a stacked bar
// against its GPU's capacity, and the same figures as a table.
function drawTrainMemory(tl) {
  const rowH = 24, left = 190, right = 150, top = 8, axisH = 24, width = 760;
  const height = top + rowH * tl.stages.length + axisH;
  const most = Math.max(1, ...tl.stages.map((st) => Math.max(st.capacity_bytes, st.memory.total)));
  const x = (b) => left + ((width - left - right) * b) / most;
  let h = '';
  tl.stages.forEach((st, k) => {
    const y = top + k * rowH;
    h += `<text x="${left - 8}" y="${y + rowH / 2 + 4}" text-anchor="end" fill="#1b1f24" font-size="12">${esc(stageName(st, tl))}</text>`;
    let at = 0;
    for (const [part, colour] of memParts) {
      const v = st.memory[part] || 0;
      if (v <= 0) continue;
      h += `<rect x="${x(at).toFixed(2)}" y="${y + 3}" width="${Math.max(0.5, x(at + v) - x(at)).toFixed(2)}" height="${rowH - 6}" fill="${colour}" data-part="${part}"><title>${esc(`${part}: ${gb(v)}`)}</title></rect>`;
      at += v;
    }
    const cx = x(st.capacity_bytes).toFixed(1);
    h += `<line x1="${cx}" y1="${y + 1}" x2="${cx}" y2="${y + rowH - 1}" stroke="#1b1f24" stroke-width="2"></line>`;
    h += `<text x="${width - right + 8}" y="${y + rowH / 2 + 4}" fill="${st.fits ? '#1b1f24' : '#b91c1c'}" font-size="12">${esc(`${gb(st.memory.total)} of ${gb(st.capacity_bytes)}`)}</text>`;
  });
  const step = tickStep(most / 1e9);
  for (let v = 0; v <= most / 1e9 + 1e-9; v += step) h += `<text x="${x(v * 1e9).toFixed(1)}" y="${height - 6}" text-anchor="middle" fill="#4b5563" font-size="12">${+v.toFixed(2)} GB</text>`;
  const svg = $('tr-memory');
  svg.setAttribute('width', width); svg.setAttribute('height', height);
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('aria-label', `Memory per GPU of ${tl.stages.length} stages against capacity; the table below gives the figures`);
  svg.innerHTML = h;
  $('tr-mem-legend').innerHTML = memParts.map(([p, c]) => swatch(c, p)).join('') +
    '<span><svg width="12" height="12" aria-hidden="true"><line x1="6" y1="0" x2="6" y2="12" stroke="#1b1f24" stroke-width="2"></line></svg> capacity</span>';
  const mt = table('tr-mem-table', ['stage', 'layers', ...memParts.map((p) => p[0]), 'total', 'capacity', 'fits'], tl.stages.map((st) =>
    [esc(stageName(st, tl)), `${st.layers.first}–${st.layers.last}`, ...memParts.map((p) => gb(st.memory[p[0]])), gb(st.memory.total), gb(st.capacity_bytes), st.fits ? 'yes' : '<span class="err">no</span>']),
  [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
  mt.insertAdjacentHTML('afterbegin', '<caption>Memory per GPU by stage</caption>');
}

// ---- start -----------------------------------------------------------

async function start() {
  // A link to a plan draws it first; the rest of the app starts after.
  const [page, arg] = location.hash.slice(1).split('/');
  if (page === 'view' && arg) {
    for (const p of pages) $('page-' + p).hidden = p !== 'view';
    await loadPlan(arg);
  }
  window.addEventListener('hashchange', () => {
    const name = route();
    const h = document.querySelector(`#page-${name} h1`);
    if (h) h.focus();
  });
  initView();
  initWhatIf();
  initBench();
  state.planners = await api('GET', '/api/planners');
  initPlan();
  await initPlatform();
  await initCluster();
  await initTraining();
  await initWorkload();
  route();
  document.body.dataset.ready = '1';
}

start().catch((e) => {
  document.body.insertAdjacentHTML('afterbegin', `<p role="alert" class="errline">${esc(e.message)}</p>`);
});
