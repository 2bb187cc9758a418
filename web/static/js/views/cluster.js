// The cluster: its nodes (live, draining, down), what each holds, and every physical partition's Raft group (its
// leader, voters and learners), from GET /_partita/cluster every 2 s; a button drains a node or
// cancels its drain. Everything is seen from the node that serves the page: it lists the live
// nodes, and its replicas know their groups' members. The page may ask no other node (its
// content security policy allows its own origin only), so lag, which needs every replica's
// LSN, is left to `partita cluster status`.

import * as api from '../api.js';
import {h, clear, note, bytes, num, shortEPK} from '../dom.js';

const POLL_MS = 2000;

// hexId writes a node id as `partita cluster status` shows it and `partita node drain` takes it.
const hexId = id => BigInt(id).toString(16);
const rangeKey = (db, c) => JSON.stringify([db, c]);

export function clusterView(el) {
  const summary = h('p', {class: 'stats', id: 'cluster-summary'}, 'Loading…');
  const status = h('div', {});
  const single = h('div', {id: 'cluster-single'});
  const nodes = h('div', {class: 'scroll'});
  const result = h('div', {class: 'result', id: 'cluster-result'});
  const parts = h('div', {class: 'scroll'});
  const nodesCard = h('div', {class: 'card'}, h('h2', {}, 'Nodes'), nodes, result,
    h('p', {class: 'legend'}, 'Replicas, leaders and learners count the partitions whose group holds the node, is led by it, or holds it as a learner (catching up, not yet voting), as this node\'s replicas know their groups. ',
      'Missing: a node seen in a group or earlier on this page that is not live now.'));
  el.append(h('h1', {}, 'Cluster'), summary, status, single, nodesCard,
    h('div', {class: 'card'}, h('h2', {}, 'Partitions'), parts,
      h('p', {class: 'legend'}, 'LSN, items and bytes are this node\'s replica\'s. The lag of each replica needs every node\'s LSN: ', h('code', {}, 'partita cluster status'), ' asks every node.')));

  const known = new Map(); // node id -> the node as last seen live, to name nodes that left
  const ranges = new Map(); // rangeKey -> Map(partition id -> [min, max]); a partition's range never changes
  let drawn = ''; // what the tables show: they are redrawn only when it changes
  let busy = false; // a drain or cancel is under way: the buttons stay disabled, even redrawn
  // The buttons are kept across redraws (leaderships move every second while the cluster
  // rebalances), so that a click is not lost to a redraw between the press and the release.
  const buttons = new Map(); // node id and action -> its button
  const button = (n, cancel) => {
    const k = `${n.id} ${cancel}`;
    if (!buttons.has(k)) {
      buttons.set(k, cancel ? h('button', {class: 'quiet undrain', onclick: () => act(n, true)}, 'Cancel drain') :
        h('button', {class: 'danger quiet drain', onclick: () => act(n, false)}, 'Drain'));
    }
    buttons.get(k).disabled = busy;
    return buttons.get(k);
  };
  let timer = null;
  let stopped = false;

  async function poll() {
    if (document.hidden) { // a tab in the background asks nothing
      timer = setTimeout(poll, POLL_MS);
      return;
    }
    try {
      const st = await api.clusterStatus();
      await fillRanges([...(st.replicas || []), ...(st.elsewhere || [])]);
      if (stopped) return;
      clear(status);
      draw(st);
    } catch (err) {
      if (stopped) return;
      clear(status).append(note(`Could not refresh: ${err.message}`, 'error'));
      if (err.status === 401) return; // signed out: stop polling
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }

  // fillRanges reads the ranges of the containers that have a partition not seen yet (a new
  // container, or a split); a failure leaves the range unknown until the next poll.
  async function fillRanges(replicas) {
    const need = new Map();
    for (const r of replicas) {
      const k = rangeKey(r.database, r.container);
      if (!ranges.get(k)?.has(r.partition)) need.set(k, [r.database, r.container]);
    }
    await Promise.all([...need].map(async ([k, [db, c]]) => {
      try {
        ranges.set(k, new Map((await api.pkranges(db, c)).map(p => [Number(p.id), [p.minInclusive, p.maxExclusive]])));
      } catch { /* shown as unknown */ }
    }));
  }

  function draw(st) {
    const m = model(st, known, ranges);
    const live = m.nodes.filter(n => n.state !== 'missing' && n.state !== 'down');
    const draining = live.filter(n => n.draining).length;
    const missing = m.nodes.length - live.length;
    const me = known.get(m.self);
    summary.replaceChildren(...(m.single ? [h('strong', {}, 'A single node'), ` · ${m.partitions.length} partition${m.partitions.length === 1 ? '' : 's'}`] :
      [h('strong', {id: 'cluster-count'}, `${live.length} live node${live.length === 1 ? '' : 's'}`),
        // The draining nodes are among the live ones: "4 live nodes, 1 draining" read as five.
        draining ? ` (${draining === live.length ? (live.length === 1 ? 'draining' : 'all draining') : `${draining} of them draining`})` : '',
        missing ? `, ${missing} down or missing` : '',
        ` · this node: ${me ? me.addr : hexId(m.self)} · ${m.partitions.length} partition${m.partitions.length === 1 ? '' : 's'}`]),
    ` · updated ${new Date().toLocaleTimeString()}`);
    const sig = JSON.stringify(m);
    if (sig === drawn) return;
    drawn = sig;
    nodesCard.hidden = m.single;
    clear(single);
    if (m.single) {
      single.append(note('This server is a single node, not a cluster: it holds every partition itself, and there is no node to drain. docs/cluster.md tells how to start a cluster.'));
    } else {
      clear(nodes).append(nodeTable(m, button));
      if (m.partitions.length === 0 && me?.draining) {
        single.append(note('This node is drained: it holds no replica, so it knows no partition\'s group. Open the explorer on another node (its API address above) to see them.'));
      }
    }
    clear(parts).append(m.partitions.length === 0 ? note('No partitions here: there are no containers yet, or this node has not received its replicas.') : partitionTable(m, known));
  }

  async function act(n, cancel) {
    const question = cancel ? `Cancel the drain of node ${n.addr}? It receives a replica of every partition again.` :
      `Drain node ${n.addr}? The other nodes take its leaderships and its replicas are removed; it then holds nothing until the drain is cancelled.`;
    if (!confirm(question)) return;
    busy = true;
    for (const b of nodes.querySelectorAll('button')) b.disabled = true;
    clear(result);
    try {
      await api.drain(n.addr, cancel);
      result.append(note(cancel ? `The drain of ${n.addr} is cancelled: it receives its replicas again.` :
        `Node ${n.addr} is draining: its replica count falls to 0 as the leaders remove its replicas.`, 'ok'));
    } catch (err) {
      result.append(note(`${cancel ? 'The drain of ' + n.addr + ' was not cancelled' : 'Node ' + n.addr + ' was not drained'}: ${err.message}`, 'error'));
    }
    busy = false;
    for (const b of nodes.querySelectorAll('button')) b.disabled = false;
  }

  poll();
  return () => { stopped = true; clearTimeout(timer); };
}

// model is what the view shows of a status, with every node id as a decimal string.
function model(st, known, ranges) {
  const self = String(st.node);
  // This node's replicas, and the partitions it holds none of (--replicas), as their groups'
  // records place them.
  const norm = here => r => ({...r, here, leader: String(r.leader), voters: (r.voters || []).map(String), learners: (r.learners || []).map(String)});
  const reps = [...(st.replicas || []).map(norm(true)), ...(st.elsewhere || []).map(norm(false))]
    .sort((a, b) => a.database.localeCompare(b.database) || a.container.localeCompare(b.container) || a.partition - b.partition);
  // The nodes the control plane knows: live, or down (registered once, not live now).
  const listed = (st.nodes || []).map(n => ({...n, id: String(n.id), state: n.down ? 'down' : n.draining ? 'live, draining' : 'live'}));
  for (const n of listed) known.set(n.id, n);
  const ids = new Set(listed.map(n => n.id));
  const missing = new Set([...known.keys()].filter(id => !ids.has(id)));
  for (const r of reps) for (const id of [...r.voters, ...r.learners]) if (!ids.has(id)) missing.add(id);
  const nodes = [...listed, ...[...missing].map(id => ({addr: '', api: '', ...known.get(id), id, draining: false, state: 'missing'}))];
  for (const n of nodes) {
    n.replicas = reps.filter(r => r.voters.includes(n.id) || r.learners.includes(n.id)).length;
    n.leaders = reps.filter(r => r.leader === n.id).length;
    n.learning = reps.filter(r => r.learners.includes(n.id)).length;
  }
  const partitions = reps.map(r => ({database: r.database, container: r.container, id: r.partition,
    range: ranges.get(rangeKey(r.database, r.container))?.get(r.partition) || null,
    leader: r.leader, voters: r.voters, learners: r.learners, quorum: r.quorum || '', here: r.here, lsn: r.LSN, items: r.Items, bytes: r.Bytes}));
  // A drained node's counts are unknown, not zero: it holds no replica to learn them from.
  const blind = reps.length === 0 && Boolean(known.get(self)?.draining);
  return {self, single: self === '0', blind, nodes, partitions};
}

function nodeTable(m, button) {
  const count = x => m.blind ? '–' : num(x);
  return h('table', {class: 'list', id: 'cluster-nodes'},
    h('thead', {}, h('tr', {}, ['Node', 'Cluster address', 'API address', 'CQL', 'Status', 'Replicas', 'Leaders', 'Learners', ''].map(t => h('th', {}, t)))),
    h('tbody', {}, m.nodes.map(n => h('tr', {'data-id': hexId(n.id), 'data-addr': n.addr, class: n.id === m.self ? 'current' : ''},
      h('td', {class: 'node'}, h('code', {}, hexId(n.id)), n.id === m.self ? h('small', {}, ' (this node)') : ''),
      h('td', {class: 'addr'}, n.addr || '–'),
      h('td', {class: 'api'}, n.api && n.id !== m.self && n.state.startsWith('live') ?
        h('a', {href: `${location.protocol}//${n.api}/_explorer/#/cluster`, title: 'This view on that node (sign in there too)'}, n.api) : n.api || '–'),
      h('td', {}, n.cql || '–'),
      h('td', {class: 'status ' + (n.state === 'live' ? 'ok' : n.state.startsWith('live') ? 'warn' : 'bad')}, n.state),
      h('td', {class: 'n replicas'}, count(n.replicas)),
      h('td', {class: 'n leaders'}, count(n.leaders)),
      h('td', {class: 'n learners'}, count(n.learning)),
      h('td', {class: 'actions'}, n.state.startsWith('live') ? button(n, Boolean(n.draining)) : '')))));
}

function partitionTable(m, known) {
  const name = id => id === '0' ? 'none known' : (known.get(id)?.addr || hexId(id)) + (id === m.self ? ' (this node)' : '');
  const list = ids => ids.length ? ids.map((id, i) => [i ? ', ' : '', h('span', {class: 'nowrap'}, name(id))]) : '–';
  return h('table', {class: 'list', id: 'cluster-partitions'},
    h('thead', {}, h('tr', {}, ['Database', 'Container', 'Partition', 'Range', 'Leader', 'Quorum', 'Voters', 'Learners', 'LSN', 'Items', 'Bytes'].map(t => h('th', {}, t)))),
    h('tbody', {}, m.partitions.map(p => h('tr', {'data-key': `${p.database}/${p.container}/${p.id}`},
      h('td', {}, p.database),
      h('td', {}, p.container),
      h('td', {class: 'n'}, String(p.id)),
      h('td', {class: 'nowrap'}, p.range ? h('code', {title: `[${p.range[0] || '""'}, ${p.range[1]})`}, `[${shortEPK(p.range[0])}, ${shortEPK(p.range[1])})`) : '–'),
      h('td', {class: 'leader' + (m.single ? '' : p.leader === '0' ? ' bad' : '')}, m.single ? 'this node' : name(p.leader)),
      h('td', {class: 'quorum' + (p.quorum === 'healthy' || m.single ? '' : ' bad'), title: 'As the leader sees its group: healthy, or at risk when one more voter lost would leave it without a majority'},
        m.single ? '–' : p.quorum || (p.leader === '0' ? 'no leader' : 'known to its leader')),
      h('td', {class: 'voters'}, list(p.voters)),
      h('td', {class: 'learners'}, list(p.learners)),
      ...(p.here ? [h('td', {class: 'n'}, num(p.lsn)), h('td', {class: 'n'}, num(p.items)), h('td', {class: 'n'}, bytes(p.bytes))] :
        [h('td', {class: 'elsewhere', colspan: 3, title: 'This node holds no replica of the partition: open this view on one of its voters for its figures'}, 'on other nodes')])))));
}
