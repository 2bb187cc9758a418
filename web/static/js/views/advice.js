// The partition-key advisor's answer for a container: candidate keys ranked with the reasons
// for their scores, and synthetic keys with their predicted spread over physical partitions.

import * as api from '../api.js';
import {h, s, note, num, pct} from '../dom.js';

const fixed = (x, d = 2) => x === null || x === undefined ? '–' : Number(x).toFixed(d);

export async function adviceView(el, {db, c}) {
  const out = h('div', {id: 'advice'}, note('Sampling the container…'));
  el.append(out);
  let a;
  try {
    a = await api.advice(db, c);
  } catch (err) {
    if (err instanceof api.ApiError && (err.status === 404 || err.status === 400)) {
      out.replaceChildren(note(`No advice: ${err.message}`, 'error'));
      return;
    }
    throw err;
  }
  out.replaceChildren(
    h('p', {class: 'stats'}, `Sampled ${num(a.sampled)} items. Current key: `, h('code', {}, (a.current || []).join(', ') || 'none')),
    h('div', {class: 'card'}, h('h2', {}, 'Candidate keys'),
      (a.candidates || []).length === 0 ? note('No candidates.') :
        h('div', {class: 'scroll'}, h('table', {class: 'list advice', id: 'advice-candidates'},
          h('thead', {}, h('tr', {}, ['#', 'Key', 'Score', 'Verdict', 'Distinct values', 'Storage skew', 'Request skew', 'Fan-out', 'Cap risk', 'Why'].map(t => h('th', {}, t)))),
          h('tbody', {}, a.candidates.map(k => h('tr', {class: sameKey(k.paths, a.current) ? 'current' : ''},
            h('td', {class: 'n'}, String(k.rank)),
            h('td', {}, h('code', {}, k.paths.join(', ')), sameKey(k.paths, a.current) ? h('small', {}, ' (current)') : ''),
            h('td', {class: 'n'}, scoreBar(k.score)),
            h('td', {}, h('span', {class: `badge ${k.verdict}`}, k.verdict)),
            h('td', {class: 'n'}, num(k.cardinality)),
            h('td', {class: 'n'}, fixed(k.storageSkew)),
            h('td', {class: 'n'}, fixed(k.requestSkew)),
            h('td', {class: 'n'}, k.fanOutShare === null || k.fanOutShare === undefined ? '–' : pct(k.fanOutShare)),
            h('td', {}, h('span', {class: `badge risk-${k.capRisk}`}, k.capRisk)),
            h('td', {}, h('ul', {class: 'reasons'}, (k.reasons || []).map(r => h('li', {}, r)))))))))),
    h('div', {class: 'card'}, h('h2', {}, 'Synthetic keys'),
      (a.synthetic || []).length === 0 ? note('None proposed: a property of the items spreads well enough.') :
        h('div', {class: 'synthetic', id: 'advice-synthetic'}, a.synthetic.map(p => h('div', {class: 'proposal'},
          h('h3', {}, kindName(p.kind)),
          h('p', {}, p.description),
          h('p', {}, 'From ', h('code', {}, (p.paths || []).join(', ')), p.suffixes ? ` with ${num(p.suffixes)} suffixes` : ''),
          spreadChart(p.predictedSpread || []),
          h('ul', {class: 'reasons'}, (p.reasons || []).map(r => h('li', {}, r))))))));
}

function sameKey(a, b) {
  return Array.isArray(b) && a.length === b.length && a.every((p, i) => p === b[i]);
}

function kindName(k) {
  return {'concat': 'Concatenated properties', 'random-suffix': 'Random suffix', 'hash-suffix': 'Suffix from a hash'}[k] || k;
}

function scoreBar(score) {
  return h('span', {class: 'score'}, s('svg', {width: 50, height: 8},
    s('rect', {width: 50, height: 8, fill: '#e5e7eb', rx: 2}),
    s('rect', {width: Math.max(0, Math.min(score, 100)) / 2, height: 8, fill: score >= 70 ? '#059669' : score >= 40 ? '#f59e0b' : '#dc2626', rx: 2})), ` ${num(score)}`);
}

// spreadChart draws each physical partition's predicted share as a bar, with the even share
// as a dashed line.
function spreadChart(spread) {
  if (spread.length === 0) return null;
  const W = 300, H = 90, B = 14;
  const max = Math.max(...spread.map(p => p.share), 1 / spread.length) * 1.15;
  const bw = W / spread.length;
  const y = v => (H - B) * (1 - v / max);
  const svg = s('svg', {class: 'spread', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': 'Predicted share of each physical partition'});
  for (const [i, p] of spread.entries()) {
    svg.append(s('rect', {x: i * bw + 1, y: y(p.share), width: Math.max(bw - 2, 1), height: (H - B) - y(p.share), fill: '#2563eb'},
      s('title', {}, `Partition ${p.partition}: ${pct(p.share)}`)));
    if (spread.length <= 16) svg.append(s('text', {x: i * bw + bw / 2, y: H - 2, 'text-anchor': 'middle', class: 'tick'}, String(p.partition)));
  }
  svg.append(s('line', {x1: 0, x2: W, y1: y(1 / spread.length), y2: y(1 / spread.length), stroke: '#6b7280', 'stroke-dasharray': '3 3'}));
  return h('figure', {}, svg, h('figcaption', {}, 'Predicted share per physical partition; dashed: an even spread'));
}
