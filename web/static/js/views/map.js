// The live partition map: the container's physical partitions as their EPK ranges drawn to
// scale over the space of hashes (where the server places each range, hashStart to hashEnd
// from 0 to 1, for version 1 hashes as for version 2), each coloured by its normalized RU
// consumption, with a table of their storage, request units, throttling and busiest logical
// partitions, and a timeline of normalized consumption per partition over the last five
// minutes. It polls the partitions view every 1.5 s, so splits show as they happen.

import * as api from '../api.js';
import {h, s, clear, note, bytes, num, pct, shortEPK} from '../dom.js';

const POLL_MS = 1500;
const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2', '#65a30d', '#dc2626', '#4b5563', '#ca8a04'];
const colour = id => PALETTE[id % PALETTE.length];

// heat colours a normalized consumption: pale when idle, amber when busy, red at or past the
// budget (requests were, or could have been, throttled).
function heat(x) {
  if (x >= 1) return '#dc2626';
  if (x >= 0.7) return '#f59e0b';
  if (x >= 0.3) return '#fcd34d';
  if (x > 0) return '#bfdbfe';
  return '#e5e7eb';
}

export function mapView(el, {db, c}) {
  const summary = h('p', {class: 'stats', id: 'map-summary'}, 'Loading…');
  const bar = h('div', {class: 'bar-wrap'});
  const table = h('div', {class: 'scroll'});
  const events = h('ul', {class: 'events', id: 'map-events'});
  const timeline = h('div', {class: 'timeline'});
  const status = h('div', {});
  el.append(
    h('div', {class: 'card'}, h('h2', {}, 'Partition map'), summary, bar, legend(), status),
    h('div', {class: 'card'}, h('h2', {}, 'Physical partitions'), table),
    h('div', {class: 'card', id: 'timeline-card'}, h('h2', {}, 'Normalized RU consumption, last 5 minutes'), timeline),
    h('div', {class: 'card'}, h('h2', {}, 'Splits seen'), events));

  const seen = new Map(); // id -> first time this view saw it
  // gone keeps the history of partitions that split while the view was open, so that their
  // series stay on the timeline next to their children's (the server forgets a partition
  // once it has split).
  const gone = new Map(); // id -> partition as last seen
  let last = [];
  let first = true;
  let opened = 0; // the time of the first answer: partitions seen later are new
  const fresh = (id, now) => seen.get(id) > opened && now - seen.get(id) < 10000;
  let timer = null;
  let stopped = false;

  async function poll() {
    if (document.hidden) { // a tab in the background asks nothing
      timer = setTimeout(poll, POLL_MS);
      return;
    }
    try {
      const view = await api.partitions(db, c);
      if (stopped) return;
      clear(status);
      const now = Date.now();
      for (const p of view.partitions) {
        if (!seen.has(p.id)) {
          seen.set(p.id, now);
          if (!first && p.parents.length) {
            events.prepend(h('li', {}, `${new Date(now).toLocaleTimeString()}: partition ${p.id} [${shortEPK(p.minInclusive)}, ${shortEPK(p.maxExclusive)}) split from ${p.parents.join(' → ')}`));
          }
        }
      }
      if (first && events.childElementCount === 0) events.append(h('li', {class: 'muted'}, 'None while this page was open; ranges with parents came from earlier splits.'));
      const present = new Set(view.partitions.map(p => p.id));
      for (const p of last) if (!present.has(p.id)) gone.set(p.id, p);
      last = view.partitions;
      if (first) opened = now;
      first = false;
      draw(view, now);
    } catch (err) {
      if (stopped) return;
      clear(status).append(note(`Could not refresh: ${err.message}`, 'error'));
      if (err.status === 404 || err.status === 401) return; // gone, or signed out: stop polling
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }

  function draw(view, now) {
    const ps = view.partitions;
    const sum = k => ps.reduce((a, p) => a + p[k], 0);
    const budget = sum('ruPerSecond');
    summary.replaceChildren(
      h('strong', {id: 'map-count'}, `${ps.length} physical partition${ps.length === 1 ? '' : 's'}`),
      ` · ${num(sum('items'))} items · ${bytes(sum('bytes'))} · `,
      budget > 0 ? `${num(budget)} RU/s provisioned (${num(ps[0].ruPerSecond)} each)` : 'no RU/s limit',
      ` · ${num(sum('throttled'))} requests throttled`,
      ...(view.partitionKeyDeletes || []).map(k => h('span', {class: 'key-delete', title: `Asked ${new Date(k.since * 1000).toLocaleString()}; the items are gone for reads and deleted in the background`},
        ` · deleting the items of partition key ${JSON.stringify(k.partitionKey)} (partition ${k.partition})`)));
    clear(bar).append(rangeBar(ps, id => fresh(id, now)));
    clear(table).append(partitionTable(ps, id => fresh(id, now)));
    clear(timeline).append(timelineChart(ps, [...gone.values()], view.historyStepSeconds || 5, now));
  }

  poll();
  return () => { stopped = true; clearTimeout(timer); };
}

function rangeBar(ps, isNew) {
  const W = 1000, top = 6, hgt = 44;
  const svg = s('svg', {id: 'partition-bar', viewBox: `0 0 ${W} 78`, role: 'img', 'aria-label': 'Partition key ranges over the hash space'});
  for (const p of ps) {
    const x0 = p.hashStart * W, x1 = p.hashEnd * W;
    const g = s('g', {class: 'range' + (isNew(p.id) ? ' fresh' : ''), 'data-id': p.id},
      s('title', {}, `Partition ${p.id}: [${p.minInclusive || '""'}, ${p.maxExclusive})\n${num(p.items)} items, ${bytes(p.bytes)}\n` +
        `${num(p.ruLastSecond, 1)} of ${num(p.ruPerSecond)} RU/s last second; peak ${pct(p.normalizedRUConsumption)} in the last minute\n${num(p.throttled)} throttled` +
        (p.burstRU ? `\n${num(p.burstRU)} RU banked for bursts` : '')),
      s('rect', {x: x0, y: top, width: Math.max(x1 - x0, 1), height: hgt, fill: heat(p.normalizedRUConsumption), stroke: '#fff', 'stroke-width': 2}));
    if (x1 - x0 > 36) {
      g.append(s('text', {x: (x0 + x1) / 2, y: top + hgt / 2 + 5, 'text-anchor': 'middle', class: 'range-label'}, `${p.id}`));
    }
    svg.append(g);
  }
  for (const [f, label] of [[0, '0'], [0.25, '¼'], [0.5, '½'], [0.75, '¾'], [1, '1']]) {
    const x = f * W;
    svg.append(s('line', {x1: x, x2: x, y1: top + hgt, y2: top + hgt + 6, stroke: '#9ca3af'}),
      s('text', {x: Math.min(Math.max(x, 10), W - 12), y: top + hgt + 22, 'text-anchor': 'middle', class: 'tick'}, label));
  }
  return svg;
}

function legend() {
  const items = [['#e5e7eb', 'idle'], ['#bfdbfe', 'under 30%'], ['#fcd34d', '30–70%'], ['#f59e0b', '70–100%'], ['#dc2626', 'at or over budget']];
  return h('p', {class: 'legend'}, 'Colour: the busiest second of the last minute, as a share of the partition\'s RU/s — ',
    items.map(([c, t]) => h('span', {class: 'swatch-wrap'}, s('svg', {width: 12, height: 12, class: 'swatch'}, s('rect', {width: 12, height: 12, fill: c, rx: 2})), ` ${t} `)));
}

// meter draws a share as a small bar, in the heat colours or in fill.
function meter(x, fill = heat(x)) {
  return s('svg', {width: 60, height: 8, class: 'meter'},
    s('rect', {width: 60, height: 8, fill: '#e5e7eb', rx: 2}),
    s('rect', {width: Math.min(x, 1) * 60, height: 8, fill, rx: 2}));
}

// logicals lists logical partitions by their key values (as JSON, so that "42" and 42 differ),
// each with the first digits of its EPK beside it; by the EPK alone when no item of it could be
// read.
function logicals(list, show) {
  if (!list || list.length === 0) return '–';
  return h('ol', {class: 'logical'}, list.map(l => h('li', {title: `EPK ${l.epk || '""'}`},
    'key' in l ? h('code', {class: 'key'}, JSON.stringify(l.key)) : '',
    ' ', h('code', {class: 'epk muted'}, l.epk.slice(0, 8) || '""'), ' ', show(l))));
}

function partitionTable(ps, isNew) {
  const maxBytes = Math.max(1, ...ps.map(p => p.bytes));
  return h('table', {class: 'list partitions', id: 'partition-table'},
    h('thead', {}, h('tr', {}, ['Id', 'Range', 'Parents', 'Items', 'Bytes', 'RU/s last second', 'Normalized (1 min)', '429s', 'Largest logical', 'Hottest logical (RU, 1–2 min)'].map(t => h('th', {}, t)))),
    h('tbody', {}, ps.map(p => h('tr', {'data-id': p.id, class: isNew(p.id) ? 'fresh' : ''},
      h('td', {}, s('svg', {width: 10, height: 10}, s('rect', {width: 10, height: 10, fill: colour(p.id), rx: 2})), ` ${p.id}`),
      h('td', {class: 'nowrap'}, h('code', {}, `[${shortEPK(p.minInclusive)}, ${shortEPK(p.maxExclusive)})`)),
      h('td', {}, p.parents.length ? p.parents.join(' → ') : '–'),
      h('td', {class: 'n'}, num(p.items)),
      h('td', {class: 'n'}, bytes(p.bytes), ' ', meter(p.bytes / maxBytes, '#93c5fd')),
      h('td', {class: 'n'}, p.ruPerSecond > 0 ? `${num(p.ruLastSecond, 1)} / ${num(p.ruPerSecond)} ` : `${num(p.ruLastSecond, 1)} `, p.ruPerSecond > 0 ? meter(p.ruLastSecond / p.ruPerSecond) : '',
        p.burstRU ? h('span', {class: 'muted', title: 'Burst capacity: RUs banked while idle, spent on what the rate would refuse'}, ` +${num(p.burstRU)} banked`) : ''),
      h('td', {class: 'n'}, p.ruPerSecond > 0 ? pct(p.normalizedRUConsumption) : '–'),
      h('td', {class: 'n' + (p.throttled ? ' bad' : '')}, num(p.throttled)),
      h('td', {}, logicals(p.largestLogicalPartitions, l => `${bytes(l.bytes)}, ${num(l.items)} item${l.items === 1 ? '' : 's'}`)),
      h('td', {}, logicals(p.hottestLogicalPartitions, l => `${num(l.ru, 1)} RU`))))));
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten, for an axis.
function niceCeil(x) {
  const p = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].find(m => m * p >= x) * p;
}

// timelineChart draws one line per partition over the last five minutes: the busiest second
// of each window as a share of the budget (or in RU/s when the container has no limit). A
// window without a point spent nothing; a series starts at its partition's first point.
function timelineChart(ps, split, step, now) {
  const W = 1000, H = 220, L = 48, R = 10, T = 10, B = 24;
  const span = 300; // seconds shown
  const end = Math.floor(now / 1000 / step) * step;
  const start = end - span + step;
  const limited = ps.some(p => p.ruPerSecond > 0);
  const val = pt => limited ? pt.normalized : pt.peakRU;
  const all = [...split, ...ps];
  let top = limited ? 1 : 10; // the top tick: 100%, or 10 RU/s, or more to fit every point
  for (const p of all) for (const pt of p.normalizedRUHistory) top = Math.max(top, val(pt));
  top = limited ? Math.ceil(top * 4) / 4 : niceCeil(top);
  const ymax = top * 1.08;
  const x = t => L + (t - start) / (end - start) * (W - L - R);
  const y = v => T + (1 - v / ymax) * (H - T - B);
  const svg = s('svg', {id: 'timeline', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Normalized RU consumption per partition over time'});
  // Ticks every 25% while that makes few; four otherwise.
  const ticks = limited && top <= 2 ? Math.round(top * 4) : 4;
  for (let i = 0; i <= ticks; i++) {
    const v = top * i / ticks;
    svg.append(s('line', {x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: '#eef0f3'}),
      s('text', {x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick'}, limited ? `${Math.round(v * 100)}%` : num(v)));
  }
  if (limited) svg.append(s('line', {x1: L, x2: W - R, y1: y(1), y2: y(1), stroke: '#dc2626', 'stroke-dasharray': '4 4'}));
  for (let m = 0; m <= 5; m++) {
    const t = end - m * 60;
    svg.append(s('text', {x: x(t), y: H - 6, 'text-anchor': 'middle', class: 'tick'}, m === 0 ? 'now' : `−${m} min`));
  }
  let any = false;
  for (const p of all) {
    const pts = p.normalizedRUHistory.filter(pt => pt.time >= start);
    if (pts.length === 0) continue;
    any = true;
    const retired = split.includes(p);
    // A live partition's series runs to now; one that split ends at its last point.
    const until = retired ? pts[pts.length - 1].time : end;
    const byTime = new Map(pts.map(pt => [pt.time, val(pt)]));
    const coords = [];
    for (let t = pts[0].time; t <= until; t += step) coords.push(`${x(t).toFixed(1)},${y(byTime.get(t) || 0).toFixed(1)}`);
    const g = s('g', {class: 'series' + (retired ? ' retired' : ''), 'data-id': p.id}, s('title', {}, `Partition ${p.id}${retired ? ' (split)' : ''}`),
      s('polyline', {points: coords.join(' '), fill: 'none', stroke: colour(p.id), 'stroke-width': 2, 'stroke-dasharray': retired ? '5 3' : null}));
    for (const pt of pts) g.append(s('circle', {cx: x(pt.time), cy: y(val(pt)), r: 2.5, fill: colour(p.id)}));
    svg.append(g);
  }
  if (!any) svg.append(s('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'muted'}, 'No requests in the last five minutes'));
  const key = h('p', {class: 'legend'}, all.map(p => h('span', {class: 'swatch-wrap'},
    s('svg', {width: 12, height: 12, class: 'swatch'}, s('rect', {width: 12, height: 12, fill: colour(p.id), rx: 2})), ` ${p.id}${split.includes(p) ? ' (split, dashed)' : ''} `)),
  limited ? ' · dashed: the partition\'s budget (100%)' : ' · RU/s in the busiest second (no limit set)');
  return h('div', {}, svg, key);
}
