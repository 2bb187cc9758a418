// The query editor: runs Cosmos SQL over the whole container (cross-partition), a page at a
// time, and shows the results as a table or as JSON with the charge and the query metrics.

import * as api from '../api.js';
import {h, clear, note, num} from '../dom.js';

export function queryView(el, {db, c}) {
  const text = h('textarea', {id: 'query-text', class: 'code', rows: 4, spellcheck: false, value: 'SELECT * FROM c'});
  const size = h('input', {id: 'query-page-size', type: 'number', min: 1, max: 1000, value: 100});
  const asJSON = h('input', {id: 'query-as-json', type: 'checkbox'});
  const run = h('button', {id: 'query-run'}, 'Run');
  const more = h('button', {id: 'query-more', class: 'quiet', disabled: true}, 'Next page');
  const out = h('div', {id: 'query-results'});
  let continuation = null;
  let last = null; // the page shown, to redraw it when the view changes
  let total = {charge: 0, pages: 0, count: 0};

  async function page(first) {
    run.disabled = more.disabled = true;
    try {
      if (first) { continuation = null; total = {charge: 0, pages: 0, count: 0}; }
      const r = await api.query(db, c, text.value, {maxItems: Number(size.value) || 100, continuation});
      continuation = r.continuation;
      total.charge += r.charge;
      total.pages++;
      total.count += r.results.length;
      last = r;
      draw();
    } catch (err) {
      clear(out).append(note(err.message, 'error'));
      continuation = null;
    } finally {
      run.disabled = false;
      more.disabled = !continuation;
    }
  }

  function draw() {
    if (!last) return;
    const r = last;
    clear(out).append(
      h('p', {class: 'stats', id: 'query-stats'},
        h('span', {id: 'query-charge'}, `${num(r.charge, 2)} RU`), ` for this page of ${num(r.results.length)} results`,
        total.pages > 1 ? ` · ${num(total.charge, 2)} RU for ${num(total.count)} results in ${total.pages} pages` : '',
        continuation ? ' · more pages follow' : ' · no more pages'),
      metricsTable(r.metrics),
      asJSON.checked ? h('pre', {class: 'code json', id: 'query-json'}, JSON.stringify(r.results, null, 2)) : resultTable(r.results));
  }

  asJSON.addEventListener('change', draw);
  run.addEventListener('click', () => page(true));
  more.addEventListener('click', () => page(false));
  text.addEventListener('keydown', e => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); page(true); }
  });
  el.append(h('div', {class: 'card'},
    h('label', {for: 'query-text'}, 'Query (Ctrl+Enter runs it; it reads every partition)'), text,
    h('div', {class: 'buttons'}, run, more,
      h('label', {class: 'field small'}, h('span', {}, 'Page size'), size),
      h('label', {class: 'check'}, asJSON, ' JSON'))),
  out);
}

// resultTable lays results out with a column per top-level property (of objects), or one
// value column for other results (SELECT VALUE).
function resultTable(results) {
  if (results.length === 0) return note('No results.');
  const cols = [];
  const objects = results.every(r => r !== null && typeof r === 'object' && !Array.isArray(r));
  if (objects) {
    for (const r of results) for (const k of Object.keys(r)) if (!cols.includes(k) && !(k.startsWith('_') && k !== '_ts')) cols.push(k);
  }
  const cell = v => {
    if (v === undefined) return h('td', {class: 'undefined'}, '');
    const t = typeof v === 'string' ? v : JSON.stringify(v);
    return h('td', {title: t.length > 80 ? t : null}, t.length > 80 ? t.slice(0, 80) + '…' : t);
  };
  return h('div', {class: 'scroll'}, h('table', {class: 'list results', id: 'query-table'},
    h('thead', {}, h('tr', {}, objects ? cols.map(k => h('th', {}, k)) : h('th', {}, 'value'))),
    h('tbody', {}, results.map(r => h('tr', {}, objects ? cols.map(k => cell(r[k])) : cell(r))))));
}

function metricsTable(m) {
  const names = {
    totalExecutionTimeInMs: 'Execution time (ms)', retrievedDocumentCount: 'Items loaded', retrievedDocumentSize: 'Bytes loaded',
    outputDocumentCount: 'Results', indexUtilizationRatio: 'Index utilization',
  };
  const rows = Object.entries(names).filter(([k]) => k in m);
  if (rows.length === 0) return null;
  return h('p', {class: 'metrics', id: 'query-metrics'}, h('span', {class: 'muted'}, 'Query metrics: '),
    rows.map(([k, label], i) => [i ? ' · ' : '', `${label} `, h('strong', {}, m[k])]));
}
