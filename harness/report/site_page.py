"""The trend site's page: its style and its script (harness.report.site builds the page around them).

The page fits any window from a phone (400 px) to a wide screen: the script lays the charts out before
Vega draws them, from the width the page has, and again when that width changes:

* the main charts are a grid of one row per metric (across commits, by server version, against threads):
  three columns from 1,050 px of page width (a window of about 1,110 px), two from 700 px, one below;
  each chart is as wide as its column allows (between :data:`MIN_PLOT` and :data:`MAX_PLOT` px of plot);
* the work vector's small multiples take as many columns as fit at about 260 px each;
* a legend takes no more columns than its chart's width holds; labels wrap at 44 characters
  (:data:`harness.report.chart_scales._LABEL_CHARS`), so no legend is wider than a phone's chart.

The filters (scenario, server, threads) are bound in the main view; the script passes every change on to
the work view, keeps the selection in the URL (``#scenario=...&server=...&threads=...``), and shows the
release view's and the work view's rows of the selected scenario only.
"""

from __future__ import annotations

#: The narrowest and widest plot of a main chart, in px; and the width an axis, its title and the
#: spacing around a chart take beside its plot.
MIN_PLOT = 240
MAX_PLOT = 520
CHROME = 110

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5rem;color:#1f2328;max-width:100%}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin-top:2rem}
.meta{color:#57606a;margin:0 0 1rem}
#filters{display:flex;gap:.6rem 1.5rem;flex-wrap:wrap;padding:.6rem .8rem;background:#f6f8fa;border:1px solid #d0d7de;
 border-radius:6px;margin-bottom:1rem;position:sticky;top:0;z-index:2}
#filters .vega-bind{display:flex;gap:.4rem;align-items:center}#filters .vega-bind-name{font-weight:600}
#filters select{max-width:min(70vw,22rem)}
#vis,#work{width:100%;overflow-x:auto}
#status[data-state=error]{color:#cf222e;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.worse{color:#cf222e}td.better{color:#1a7f37}
.change{color:#57606a;white-space:nowrap}.n,.server,.kind,.rest{color:#57606a;font-size:.8rem}
caption{text-align:left;font-weight:600;padding:.3rem 0}
ul.guide{padding-left:1.2rem;max-width:60rem}ul.guide li{margin:.25rem 0}
@media (max-width:600px){body{margin:.6rem}h1{font-size:1.2rem}table{font-size:.8rem}
 #filters{gap:.4rem .8rem;padding:.4rem .5rem}}
"""

_SCRIPT = """
(function () {
  var status = document.getElementById('status');
  function fail(message) {
    status.setAttribute('data-state', 'error');
    status.textContent = 'The charts could not be drawn: ' + message;
    console.error('dbperf trend: ' + message);
  }
  window.addEventListener('error', function (event) { fail(event.message); });
  if (typeof window.vegaEmbed !== 'function') { fail('vega-bundle.js did not load'); return; }
  var MIN_PLOT = @MIN_PLOT@, MAX_PLOT = @MAX_PLOT@, CHROME = @CHROME@;
  function read(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }
  var mainSpec = read('dbperf-spec'), workSpec = read('dbperf-work-spec');
  var names = {scenario: 'sel_scenario', server: 'sel_server', threads: 'sel_threads'};
  var views = [], drawn = null, spare = {};

  function layout() {
    var width = document.getElementById('vis').clientWidth || window.innerWidth;
    var columns = 3;
    while (columns > 1 && width / columns - CHROME < MIN_PLOT) { columns -= 1; }
    var plot = Math.max(160, Math.min(MAX_PLOT, Math.floor(width / columns - CHROME - (spare[columns] || 0))));
    var cells = Math.max(1, Math.min(6, Math.floor(width / 260)));
    var cell = Math.max(140, Math.floor(width / cells) - 75);
    return {columns: columns, plot: plot, cells: cells, cell: cell, width: width,
            key: columns + '/' + plot + '/' + cells};
  }
  function fitted(spec, columns, plot) {
    var copy = JSON.parse(JSON.stringify(spec));
    copy.columns = columns;
    (function walk(node) {
      if (Array.isArray(node)) { node.forEach(walk); return; }
      if (!node || typeof node !== 'object') { return; }
      if (typeof node.width === 'number' && (node.layer || node.mark)) { node.width = plot; }
      if (node.legend && typeof node.legend === 'object' && node.legend.columns) {
        node.legend.columns = Math.max(1, Math.min(node.legend.columns, Math.floor(plot / 190)));
      }
      Object.keys(node).forEach(function (key) { if (key !== 'datasets') { walk(node[key]); } });
    })(copy);
    return copy;
  }
  function selection(view) {
    var now = new URLSearchParams();
    Object.keys(names).forEach(function (key) { now.set(key, String(view.signal(names[key]))); });
    return now;
  }
  function showRows(scenario) {
    document.querySelectorAll('[data-scenario]').forEach(function (row) {
      row.hidden = row.getAttribute('data-scenario') !== scenario;
    });
  }
  function remember(view) {
    var now = selection(view);
    document.body.setAttribute('data-selection', now.toString());
    showRows(now.get('scenario'));
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, '', '#' + now.toString());
    }
  }
  function draw() {
    var plan = layout();
    if (drawn === plan.key) { return Promise.resolve(); }
    drawn = plan.key;
    views.forEach(function (view) { view.finalize(); });
    views = [];
    document.getElementById('filters').textContent = '';
    var asked = new URLSearchParams(window.location.hash.slice(1));
    var options = {renderer: 'svg', actions: {export: true, source: false, compiled: false, editor: false}};
    var main = window.vegaEmbed('#vis', fitted(mainSpec, plan.columns, plan.plot), options);
    var work = workSpec ? window.vegaEmbed('#work', fitted(workSpec, plan.cells, plan.cell), options) : null;
    return Promise.all([main, work]).then(function (results) {
      var view = results[0].view, other = results[1] ? results[1].view : null;
      views = other ? [view, other] : [view];
      window.dbperfView = view;
      Object.keys(names).forEach(function (key) {
        var value = asked.get(key);
        if (value !== null) {
          var signal = key === 'threads' ? Number(value) : value;
          views.forEach(function (v) { v.signal(names[key], signal); });
        }
        view.addSignalListener(names[key], function (name, value) {
          if (other) { other.signal(name, value).runAsync(); }
          remember(view);
        });
      });
      return Promise.all(views.map(function (v) { return v.runAsync(); })).then(function () {
        // a chart's axes and legend took more room than CHROME: narrow the plots once by the excess
        var box = document.getElementById('vis');
        var over = box.scrollWidth - box.clientWidth;  // the svg and vega-embed's menu beside it
        if (over > 1 && plan.plot > 160 && !spare['tried' + plan.columns]) {
          spare['tried' + plan.columns] = true;
          spare[plan.columns] = (spare[plan.columns] || 0) + Math.ceil(over / plan.columns) + 2;
          return draw();
        }
        remember(view);
        status.setAttribute('data-state', 'rendered');
        status.textContent = '';
        document.body.setAttribute('data-rendered', 'yes');
        document.body.setAttribute('data-layout', plan.key);
      });
    });
  }
  var waiting = null;
  window.addEventListener('resize', function () {
    clearTimeout(waiting);
    waiting = setTimeout(function () { draw().catch(function (error) { fail(String(error)); }); }, 250);
  });
  draw().catch(function (error) { fail(String(error)); });
})();
"""
SCRIPT = (
    _SCRIPT.replace("@MIN_PLOT@", str(MIN_PLOT)).replace("@MAX_PLOT@", str(MAX_PLOT)).replace("@CHROME@", str(CHROME))
)
