// The single-file report's page: reads the inlined data (gzip + base64, see data.py for its
// shape), draws the run detail, four charts and a paged table of the outputs. Everything
// from the data goes through textContent, never innerHTML: an output that contains markup
// or a closing script tag is shown as text.
(function () {
  'use strict';
  var PAGE = 50;
  var COLORS = ['#4f46e5', '#059669', '#d97706', '#dc2626', '#0891b2', '#7c3aed', '#65a30d', '#db2777'];
  var D; // the data document
  var S = { run: 0, model: -1, scorer: -1, outcome: 'any', status: -1, q: '', page: 0, open: -1 };
  var rows = []; // the filtered output indexes of the selected run
  var charts = [];
  var generation = 0; // of render(): a late chart callback of an earlier one does nothing

  function el(tag, attrs) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) {
      if (key === 'text') node.textContent = attrs[key];
      else if (key === 'cls') node.className = attrs[key];
      else if (key.slice(0, 2) === 'on') node.addEventListener(key.slice(2), attrs[key]);
      else node.setAttribute(key, attrs[key]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function money(micros) {
    if (micros === null || micros === undefined) return '–';
    var dollars = micros / 1e6;
    return '$' + (dollars >= 1 ? dollars.toFixed(2) : dollars.toFixed(6));
  }
  function num(v, digits) { return v === null || v === undefined ? '–' : Number(v).toFixed(digits); }
  function ms(v) { return v === null || v === undefined ? '–' : Math.round(v) + ' ms'; }
  function pct(v) { return v === null || v === undefined ? '–' : (100 * v).toFixed(1) + '%'; }
  function interval(iv) {
    if (!iv) return '–';
    var text = num(iv.mean !== undefined ? iv.mean : iv.rate, 3);
    return iv.low === null || iv.low === undefined ? text : text + ' [' + num(iv.low, 3) + ', ' + num(iv.high, 3) + ']';
  }
  function mean(list) { return list.length ? list.reduce(function (a, b) { return a + b; }, 0) / list.length : null; }
  function quantile(sorted, q) {
    if (!sorted.length) return null;
    var pos = (sorted.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
  }
  // numeric[i]: right-aligned figures; narrow[i]: a column left out below 760 px
  function table(head, body, numeric, narrow, cls) {
    function classes(i) { return [numeric && numeric[i] ? 'num' : '', narrow && narrow[i] ? 'hide-sm' : ''].join(' ').trim(); }
    var tr = el('tr');
    head.forEach(function (h, i) { tr.appendChild(el('th', { scope: 'col', cls: classes(i), text: h })); });
    var tbody = el('tbody');
    body.forEach(function (cells) {
      var row = el('tr');
      cells.forEach(function (c, i) { row.appendChild(el('td', { cls: classes(i) }, c)); });
      tbody.appendChild(row);
    });
    return el('div', { cls: 'scroll' }, el('table', { cls: cls || '' }, el('thead', {}, tr), tbody));
  }
  function pill(passed) {
    if (passed === null || passed === undefined) return el('span', { cls: 'pill', text: '–' });
    return el('span', { cls: 'pill ' + (passed ? 'ok' : 'bad'), text: passed ? 'pass' : 'fail' });
  }

  async function load() {
    var node = document.getElementById('assay-data');
    var bin = atob(node.textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return JSON.parse(await new Response(stream).text());
  }

  // ---- figures of one run, from the output columns -------------------------------------
  function runOutputs(r) {
    var o = D.outputs, list = [];
    for (var i = 0; i < o.count; i++) if (o.run[i] === r) list.push(i);
    return list;
  }
  function modelsOf(list) {
    var seen = {}, out = [];
    list.forEach(function (i) { var m = D.outputs.model[i]; if (!seen[m]) { seen[m] = 1; out.push(m); } });
    return out;
  }
  function scorersOf(list) {
    return D.scorers.map(function (s, k) { return k; }).filter(function (k) {
      var v = D.scores.values[k], p = D.scores.passed[k];
      return list.some(function (i) { return v[i] !== null || p[i] !== null; });
    });
  }
  function compositeIndex() {
    for (var k = 0; k < D.scorers.length; k++) if (D.scorers[k].composite) return k;
    return -1;
  }

  // ---- the run detail --------------------------------------------------------------------
  function renderDetail(root, run, list) {
    var t = run.totals || {}, tokens = t.tokens || {};
    root.appendChild(el('h2', { id: 'detail-heading', text: 'Run ' + run.id + (run.name ? ' · ' + run.name : '') }));
    root.appendChild(el('p', { cls: 'muted', text: [run.status, run.mode, run.created_at, run.description]
      .filter(Boolean).join(' · ') }));
    var cards = el('div', { cls: 'cards' });
    [['outputs', t.outputs], ['succeeded', t.succeeded], ['failed', t.failed], ['cached', t.cached],
      ['tokens', tokens.total], ['generation cost', money(t.cost_micros)], ['judge cost', money(t.judge_cost_micros)],
      ['duration', run.duration_ms === null || run.duration_ms === undefined ? '–' : (run.duration_ms / 1000).toFixed(1) + ' s']]
      .forEach(function (c) { cards.appendChild(el('div', { cls: 'stat' }, el('b', { text: c[1] === undefined ? '–' : c[1] }), el('span', { text: c[0] }))); });
    root.appendChild(cards);
    root.appendChild(el('h3', { text: 'Prompts' }));
    (run.prompts || []).forEach(function (p) {
      root.appendChild(el('div', {}, el('b', { text: p.name }), p.system ? el('pre', { text: 'system: ' + p.system }) : null,
        el('pre', { text: p.template })));
    });
    root.appendChild(el('h3', { text: 'Models' }));
    root.appendChild(table(['model', 'provider', 'score [95% CI]', 'pass rate [95% CI]', 'outputs', 'failed', 'tokens', 'cost', 'latency p50', 'p95'],
      (run.summary || []).map(function (m) {
        var conf = (run.models || []).filter(function (x) { return x.name === m.model; })[0] || {};
        return [m.model, conf.provider || conf.kind || '–', interval(m.score), interval(m.pass_rate), m.outputs, m.failed,
          (m.tokens || {}).total, money(m.cost_micros), ms((m.latency_ms || {}).p50), ms((m.latency_ms || {}).p95)];
      }), [0, 0, 1, 1, 1, 1, 1, 1, 1, 1], [0, 1, 0, 0, 1, 1, 1, 0, 0, 0]));
    var names = {};
    (run.summary || []).forEach(function (m) { Object.keys(m.scorers || {}).forEach(function (s) { names[s] = 1; }); });
    var scorerNames = Object.keys(names);
    if (scorerNames.length) {
      root.appendChild(el('h3', { text: 'Evaluation breakdown (score [95% CI] · pass rate)' }));
      var body = [];
      (run.summary || []).forEach(function (m) {
        scorerNames.forEach(function (s) {
          var f = (m.scorers || {})[s] || {};
          var kind = ((run.scorers || []).filter(function (x) { return x.name === s; })[0] || {}).kind;
          body.push([m.model, s, kind || '–', interval(f.score), f.pass_rate ? pct(f.pass_rate.rate) + ' (' + f.pass_rate.passed + '/' + f.pass_rate.total + ')' : '–']);
        });
      });
      root.appendChild(table(['model', 'scorer', 'kind', 'score', 'pass rate'], body, [0, 0, 0, 1, 1], [0, 0, 1, 0, 0]));
    }
  }

  // ---- charts ------------------------------------------------------------------------------
  function chartCard(grid, id, title, note) {
    var existing = document.getElementById(id);
    if (existing) return existing; // laid out before the charts were drawn
    var canvas = el('canvas', { id: id, role: 'img', 'aria-label': title });
    grid.appendChild(el('section', { cls: 'card chart-card', 'aria-label': title }, el('h2', { text: title }),
      el('p', { text: note }), el('div', { cls: 'chart' }, canvas)));
    return canvas;
  }
  function draw(canvas, config) {
    config.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options || {});
    charts.push(new Chart(canvas, config));
  }
  function renderCharts(grid, r, list) {
    var models = modelsOf(list), scorers = scorersOf(list), o = D.outputs;
    var composite = compositeIndex();
    // radar: each scorer's mean and each judge criterion's mean (as a fraction of its scale)
    var axes = [];
    scorers.filter(function (k) { return k !== composite; }).forEach(function (k) {
      axes.push({ label: D.scorers[k].name, value: function (i) { return D.scores.values[k][i]; } });
    });
    var criteria = {};
    D.details.forEach(function (d) { if (d[2] && o.run[d[0]] === r) Object.keys(d[2]).forEach(function (c) { criteria[D.scorers[d[1]].name + ' · ' + c] = [d[1], c]; }); });
    var critValue = {};
    D.details.forEach(function (d) {
      if (!d[2] || o.run[d[0]] !== r) return;
      Object.keys(d[2]).forEach(function (c) {
        if (d[2][c] === null) return;
        var key = D.scorers[d[1]].name + ' · ' + c + '|' + o.model[d[0]];
        var scale = D.scorers[d[1]].scales && D.scorers[d[1]].scales[c];
        var lo = scale ? scale[0] : 0, hi = scale ? scale[1] : 10;
        (critValue[key] = critValue[key] || []).push((d[2][c] - lo) / (hi - lo));
      });
    });
    var radar = chartCard(grid, 'chart-radar', 'Scores by scorer', 'Mean score per scorer and judge criterion, each as a fraction of its scale (0–1), per model.');
    var labels = axes.map(function (a) { return a.label; }).concat(Object.keys(criteria));
    if (!labels.length) radar.parentNode.replaceChildren(el('p', { cls: 'muted', text: 'No scores in this run.' }));
    else draw(radar, { type: 'radar', data: { labels: labels, datasets: models.map(function (m, n) {
      var data = axes.map(function (a) {
        var vals = []; list.forEach(function (i) { var v = a.value(i); if (o.model[i] === m && v !== null) vals.push(v); });
        return mean(vals);
      }).concat(Object.keys(criteria).map(function (c) { return mean(critValue[c + '|' + m] || []); }));
      return { label: D.models[m], data: data, borderColor: COLORS[n % COLORS.length], backgroundColor: COLORS[n % COLORS.length] + '22' };
    }) }, options: { scales: { r: { min: 0, max: 1 } } } });
    // performance: latency of the calls made (cached outputs took no call)
    var lat = models.map(function (m) {
      var v = list.filter(function (i) { return o.model[i] === m && o.latency_ms[i] !== null && !o.cached[i] && D.statuses[o.status[i]] === 'succeeded'; })
        .map(function (i) { return o.latency_ms[i]; }).sort(function (a, b) { return a - b; });
      return [quantile(v, 0.5), quantile(v, 0.95), mean(v)];
    });
    draw(chartCard(grid, 'chart-performance', 'Performance', 'Latency per model (ms), calls made (cache hits left out).'), { type: 'bar',
      data: { labels: models.map(function (m) { return D.models[m]; }), datasets: ['p50', 'p95', 'mean'].map(function (name, n) {
        return { label: name, data: lat.map(function (x) { return x[n]; }), backgroundColor: COLORS[n] };
      }) }, options: { scales: { y: { beginAtZero: true, title: { display: true, text: 'ms' } } } } });
    // cost: generation and judging per model
    var judge = {};
    D.details.forEach(function (d) { if (o.run[d[0]] === r && d[6]) judge[o.model[d[0]]] = (judge[o.model[d[0]]] || 0) + d[6]; });
    draw(chartCard(grid, 'chart-cost', 'Cost comparison', 'Dollars per model: generation and judging.'), { type: 'bar',
      data: { labels: models.map(function (m) { return D.models[m]; }), datasets: [
        { label: 'generation', backgroundColor: COLORS[0], data: models.map(function (m) {
          return list.reduce(function (a, i) { return a + (o.model[i] === m ? o.cost_micros[i] : 0); }, 0) / 1e6; }) },
        { label: 'judging', backgroundColor: COLORS[2], data: models.map(function (m) { return (judge[m] || 0) / 1e6; }) }] },
      options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: '$' } } } } });
    renderTimeSeries(grid, r, list, models, composite);
  }
  function renderTimeSeries(grid, r, list, models, composite) {
    var o = D.outputs;
    if (D.runs.length > 1 && composite >= 0) {
      // every run in the report, oldest first: each model's mean composite score
      var sums = {};
      for (var i = 0; i < o.count; i++) {
        var v = D.scores.values[composite][i];
        if (v === null) continue;
        var key = o.run[i] + '|' + o.model[i];
        (sums[key] = sums[key] || []).push(v);
      }
      draw(chartCard(grid, 'chart-time', 'Score over time', 'Mean composite score per model, run by run (all runs in this report).'), { type: 'line',
        data: { labels: D.runs.map(function (run) { return (run.created_at || run.id).replace('T', ' ').replace('Z', ''); }),
          datasets: D.models.map(function (name, m) {
            return { label: name, spanGaps: true, borderColor: COLORS[m % COLORS.length], backgroundColor: COLORS[m % COLORS.length],
              data: D.runs.map(function (run, k) { return mean(sums[k + '|' + m] || []); }) };
          }) }, options: { scales: { y: { min: 0, max: 1 } } } });
      return;
    }
    // one run: each call's latency against when it started (at most 600 points a model)
    var start = Infinity;
    list.forEach(function (i) { if (o.started_ms[i] !== null && o.started_ms[i] < start) start = o.started_ms[i]; });
    draw(chartCard(grid, 'chart-time', 'Latency over the run', 'Calls (up to 600 a model, evenly sampled): seconds since the run started (x), latency in ms (y).'), { type: 'scatter',
      data: { datasets: models.map(function (m, n) {
        var pts = list.filter(function (i) { return o.model[i] === m && o.started_ms[i] !== null && o.latency_ms[i] !== null && !o.cached[i]; });
        var step = Math.max(1, Math.ceil(pts.length / 600));
        return { label: D.models[m], backgroundColor: COLORS[n % COLORS.length], pointRadius: 2,
          data: pts.filter(function (_, j) { return j % step === 0; }).map(function (i) { return { x: (o.started_ms[i] - start) / 1000, y: o.latency_ms[i] }; }) };
      }) }, options: { scales: { x: { title: { display: true, text: 's' } }, y: { beginAtZero: true, title: { display: true, text: 'ms' } } } } });
  }

  // ---- outputs: filters, a page of rows, one output's detail -------------------------------
  function score(k, i) { return k < 0 ? null : D.scores.values[k][i]; }
  function filter(list) {
    var o = D.outputs, q = S.q.toLowerCase(), k = S.scorer >= 0 ? S.scorer : compositeIndex();
    rows = list.filter(function (i) {
      if (S.model >= 0 && o.model[i] !== S.model) return false;
      if (S.status >= 0 && o.status[i] !== S.status) return false;
      if (S.outcome !== 'any') {
        var p = k < 0 ? null : D.scores.passed[k][i];
        if (S.outcome === 'pass' && p !== 1) return false;
        if (S.outcome === 'fail' && p !== 0) return false;
        if (S.outcome === 'unscored' && (p !== null || score(k, i) !== null)) return false;
      }
      if (q && ((o.text[i] || '') + ' ' + (o.error[i] || '')).toLowerCase().indexOf(q) < 0) return false;
      return true;
    });
  }
  function caseOf(i) { return (D.runs[D.outputs.run[i]].cases || [])[D.outputs.case[i]] || {}; }
  function renderPage(box) {
    var o = D.outputs, k = S.scorer >= 0 ? S.scorer : compositeIndex();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    S.page = Math.min(S.page, pages - 1);
    var body = rows.slice(S.page * PAGE, (S.page + 1) * PAGE).map(function (i) {
      var c = caseOf(i), v = score(k, i), p = k < 0 ? null : D.scores.passed[k][i];
      return [el('button', { cls: 'link', type: 'button', 'data-output': i, onclick: function () { S.open = i; renderOpen(); }, text: c.id || String(o.case[i]) }),
        D.models[o.model[i]] + (D.prompts.length > 1 ? ' · ' + D.prompts[o.prompt[i]] : ''), D.statuses[o.status[i]], v === null ? '–' : num(v, 3), pill(p === null ? null : p === 1),
        ms(o.latency_ms[i]), o.tokens_prompt[i] + o.tokens_completion[i], money(o.cost_micros[i]),
        el('div', { cls: 'preview', text: o.text[i] !== null ? o.text[i] : o.error[i] || '' })];
    });
    box.textContent = '';
    var heading = k >= 0 ? D.scorers[k].name : 'score';
    box.appendChild(table(['case', D.prompts.length > 1 ? 'model · prompt' : 'model', 'status', heading, 'verdict', 'latency', 'tokens', 'cost', 'response'], body,
      [0, 0, 0, 1, 0, 1, 1, 1, 0], [0, 0, 1, 0, 0, 1, 1, 1, 0], 'compact'));
    if (!rows.length) box.appendChild(el('p', { cls: 'muted', text: 'No output matches these filters.' }));
    var prev = el('button', { cls: 'pager', type: 'button', text: '‹ Previous', onclick: function () { S.page--; renderPage(box); } });
    var next = el('button', { cls: 'pager', type: 'button', text: 'Next ›', onclick: function () { S.page++; renderPage(box); } });
    prev.disabled = S.page === 0;
    next.disabled = S.page >= pages - 1;
    box.appendChild(el('div', { cls: 'pagebar' }, prev, el('span', { id: 'page-status', 'aria-live': 'polite',
      text: 'Page ' + (S.page + 1) + ' of ' + pages + ' · ' + rows.length + ' outputs' }), next));
  }
  function fillTemplate(text, vars) {
    return (text || '').replace(/\{\{\s*([\w.-]+)\s*\}\}/g, function (all, name) {
      return Object.prototype.hasOwnProperty.call(vars || {}, name) ? String(vars[name]) : all;
    });
  }
  function renderOpen() {
    var box = document.getElementById('output-detail'), i = S.open, o = D.outputs;
    box.textContent = '';
    if (i < 0) return;
    var run = D.runs[o.run[i]], c = caseOf(i), pname = D.prompts[o.prompt[i]];
    var prompt = (run.prompts || []).filter(function (p) { return p.name === pname; })[0] || {};
    box.appendChild(el('h2', { id: 'output-heading', tabindex: '-1', text: 'Output: case ' + (c.id || o.case[i]) + ' · ' + D.models[o.model[i]] + ' · ' + pname + (o.repeat[i] ? ' · repeat ' + o.repeat[i] : '') }));
    var cards = el('div', { cls: 'cards' });
    box.appendChild(cards);
    [['status', D.statuses[o.status[i]]], ['latency', ms(o.latency_ms[i])], ['prompt tokens', o.tokens_prompt[i]],
      ['completion tokens', o.tokens_completion[i]], ['cost', money(o.cost_micros[i])], ['cached', o.cached[i] ? 'yes' : 'no'],
      ['attempts', o.attempts[i]], ['started', o.started_ms[i] === null ? '–' : new Date(o.started_ms[i]).toISOString().replace('T', ' ').replace('Z', '')]]
      .forEach(function (x) { cards.appendChild(el('div', { cls: 'stat' }, el('b', { text: String(x[1]) }), el('span', { text: x[0] }))); });
    if (prompt.system) box.appendChild(el('div', {}, el('h3', { text: 'System' }), el('pre', { text: fillTemplate(prompt.system, c.vars) })));
    box.appendChild(el('h3', { text: 'Prompt' }));
    box.appendChild(el('pre', { text: fillTemplate(prompt.template, c.vars) }));
    if (c.expected !== null && c.expected !== undefined) {
      box.appendChild(el('h3', { text: 'Expected' }));
      box.appendChild(el('pre', { text: typeof c.expected === 'string' ? c.expected : JSON.stringify(c.expected, null, 2) }));
    }
    box.appendChild(el('h3', { text: o.error[i] ? 'Error' : 'Response' }));
    box.appendChild(el('pre', { id: 'output-text', text: o.text[i] !== null ? o.text[i] : o.error[i] || '' }));
    var ev = [];
    D.scorers.forEach(function (s, k) {
      var v = D.scores.values[k][i], p = D.scores.passed[k][i];
      var d = D.details.filter(function (x) { return x[0] === i && x[1] === k; })[0] || [];
      if (v === null && p === null && !d.length) return;
      var crit = d[2] ? Object.keys(d[2]).map(function (c2) { return c2 + ' ' + d[2][c2]; }).join(', ') : '';
      ev.push([s.name, s.kind, v === null ? '–' : num(v, 3), pill(p === null ? null : p === 1), crit || '–',
        d[4] === null || d[4] === undefined ? '–' : num(d[4], 2), [d[3], d[5] ? 'error: ' + d[5] : null].filter(Boolean).join(' ') || '–']);
    });
    box.appendChild(el('h3', { text: 'Evaluation' }));
    box.appendChild(table(['scorer', 'kind', 'value', 'verdict', 'criteria (1–10)', 'confidence', 'reasoning'], ev, [0, 0, 1, 0, 0, 1, 0]));
    document.getElementById('output-heading').focus();
  }
  function renderOutputs(root, list) {
    var scorers = scorersOf(list), models = modelsOf(list), box = el('div', { id: 'output-page' });
    function select(label, id, options, value, onchange) {
      var s = el('select', { id: id, onchange: function () { onchange(s.value); S.page = 0; filter(list); renderPage(box); } });
      options.forEach(function (opt) { var x = el('option', { value: opt[0], text: opt[1] }); if (String(opt[0]) === String(value)) x.selected = true; s.appendChild(x); });
      return el('label', {}, label, s);
    }
    var search = el('input', { id: 'filter-text', type: 'search', placeholder: 'text in response or error' });
    var timer;
    search.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { S.q = search.value; S.page = 0; filter(list); renderPage(box); }, 150);
    });
    root.appendChild(el('h2', { id: 'outputs-heading', text: 'Outputs' }));
    root.appendChild(el('div', { cls: 'filters' },
      select('Model', 'filter-model', [[-1, 'all models']].concat(models.map(function (m) { return [m, D.models[m]]; })), S.model, function (v) { S.model = Number(v); }),
      select('Scorer', 'filter-scorer', [[-1, 'composite']].concat(scorers.filter(function (k) { return !D.scorers[k].composite; })
        .map(function (k) { return [k, D.scorers[k].name]; })), S.scorer, function (v) { S.scorer = Number(v); }),
      select('Verdict', 'filter-outcome', [['any', 'any'], ['pass', 'passed'], ['fail', 'failed'], ['unscored', 'not scored']], S.outcome, function (v) { S.outcome = v; }),
      select('Status', 'filter-status', [[-1, 'any']].concat(D.statuses.map(function (s, n) { return [n, s]; })), S.status, function (v) { S.status = Number(v); }),
      el('label', {}, 'Search', search)));
    root.appendChild(box);
    filter(list);
    renderPage(box);
  }

  function render() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var app = document.getElementById('app');
    app.textContent = '';
    var run = D.runs[S.run], list = runOutputs(S.run);
    document.querySelectorAll('#runs tr[data-run]').forEach(function (tr) {
      tr.classList.toggle('selected', Number(tr.getAttribute('data-run')) === S.run);
    });
    var detail = el('section', { cls: 'card', id: 'detail', 'aria-labelledby': 'detail-heading' });
    app.appendChild(detail);
    renderDetail(detail, run, list);
    var grid = el('div', { cls: 'charts', id: 'charts' });
    app.appendChild(grid);
    // The cards now (nothing moves later), the charts after the table is on screen.
    chartCard(grid, 'chart-radar', 'Scores by scorer', 'Mean score per scorer and judge criterion, each as a fraction of its scale (0–1), per model.');
    chartCard(grid, 'chart-performance', 'Performance', 'Latency per model (ms), calls made (cache hits left out).');
    chartCard(grid, 'chart-cost', 'Cost comparison', 'Dollars per model: generation and judging.');
    if (D.runs.length > 1 && compositeIndex() >= 0) chartCard(grid, 'chart-time', 'Score over time', 'Mean composite score per model, run by run (all runs in this report).');
    else chartCard(grid, 'chart-time', 'Latency over the run', 'Calls (up to 600 a model, evenly sampled): seconds since the run started (x), latency in ms (y).');
    var mine = ++generation;
    document.documentElement.removeAttribute('data-ready');
    requestAnimationFrame(function () {
      setTimeout(function () {
        if (mine !== generation) return; // another run was picked meanwhile
        renderCharts(grid, S.run, list);
        document.documentElement.setAttribute('data-ready', 'charts');
      }, 0);
    });
    var outputs = el('section', { cls: 'card', id: 'outputs', 'aria-labelledby': 'outputs-heading' });
    app.appendChild(outputs);
    renderOutputs(outputs, list);
    app.appendChild(el('section', { cls: 'card', id: 'output-detail', 'aria-live': 'polite' }));
    S.open = -1;
  }

  function start() {
    document.querySelectorAll('#runs button[data-run]').forEach(function (b) {
      b.addEventListener('click', function () {
        S = { run: Number(b.getAttribute('data-run')), model: -1, scorer: -1, outcome: 'any', status: -1, q: '', page: 0, open: -1 };
        render();
        document.getElementById('detail-heading').scrollIntoView();
      });
    });
    S.run = D.runs.length - 1; // the newest run first
    render();
  }

  if (typeof DecompressionStream === 'undefined' || typeof Chart === 'undefined') {
    document.getElementById('loading').textContent = 'This browser cannot read the report’s data (it needs DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later).';
    return;
  }
  load().then(function (data) { D = data; start(); }).catch(function (err) {
    var node = document.getElementById('loading');
    if (node) node.textContent = 'The report’s data could not be read: ' + err;
    throw err;
  });
})();
