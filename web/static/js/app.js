// The explorer's shell: sign-in, the location bar, and a router over the URL's fragment
// (#/, #/db/{db}, #/db/{db}/c/{container}/{tab}, #/cluster). Names in the fragment are
// URI-encoded; the key never is in it.

import * as api from './api.js';
import {h, clear, note} from './dom.js';
import {databasesView, databaseView} from './views/catalog.js';
import {itemsView} from './views/items.js';
import {queryView} from './views/query.js';
import {mapView} from './views/map.js';
import {settingsView} from './views/settings.js';
import {adviceView} from './views/advice.js';
import {clusterView} from './views/cluster.js';

const main = document.getElementById('main');
const crumbs = document.getElementById('crumbs');
const logout = document.getElementById('logout');
const clusterLink = document.getElementById('nav-cluster');

// stop ends the current view's background work (the partition map's or the cluster's polling).
let stop = () => {};
// generation counts routings, so that a view that finishes loading after the next routing
// began is stopped at once.
let generation = 0;

const tabs = [
  ['items', 'Items', itemsView],
  ['query', 'Query', queryView],
  ['partitions', 'Partitions', mapView],
  ['settings', 'Settings', settingsView],
  ['advice', 'Advice', adviceView],
];

export function link(...parts) {
  return '#/' + parts.map(encodeURIComponent).join('/');
}

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  return parts;
}

function loginView(message) {
  logout.hidden = true;
  clusterLink.hidden = true;
  clear(crumbs);
  const input = h('input', {id: 'key', type: 'password', autocomplete: 'off', spellcheck: false, required: true,
    placeholder: 'base64 account key', 'aria-label': 'Account key'});
  const error = h('div', {id: 'login-error'});
  if (message) error.append(note(message, 'error'));
  const button = h('button', {id: 'login', type: 'submit'}, 'Sign in');
  const form = h('form', {class: 'login card', onsubmit: async e => {
    e.preventDefault();
    button.disabled = true;
    clear(error);
    try {
      await api.login(input.value);
      input.value = '';
      route();
    } catch (err) {
      error.append(note(err.message, 'error'));
      button.disabled = false;
    }
  }},
  h('h1', {}, 'Sign in'),
  h('p', {}, 'Enter the account key this server was started with (', h('code', {}, 'partita serve --key'),
    '; by default the Cosmos emulator\'s public key). It stays in this browser tab and signs each request; it is never sent to the server.'),
  h('label', {for: 'key'}, 'Account key'), input, button, error);
  clear(main).append(form);
  input.focus();
}

function setCrumbs(parts) {
  clear(crumbs);
  crumbs.append(h('a', {href: '#/'}, 'Databases'));
  clusterLink.classList.toggle('active', parts[0] === 'cluster');
  if (parts[0] === 'cluster') crumbs.append(h('span', {class: 'sep'}, '/'), h('span', {}, 'Cluster'));
  if (parts.length >= 2) crumbs.append(h('span', {class: 'sep'}, '/'), h('a', {href: link('db', parts[1])}, parts[1]));
  if (parts.length >= 4) crumbs.append(h('span', {class: 'sep'}, '/'), h('a', {href: link('db', parts[1], 'c', parts[3], 'items')}, parts[3]));
}

async function containerView(el, db, c, tab) {
  const def = tabs.find(t => t[0] === tab) || tabs[0];
  const nav = h('nav', {class: 'tabs', role: 'tablist'}, tabs.map(([id, label]) =>
    h('a', {href: link('db', db, 'c', c, id), id: `tab-${id}`, role: 'tab', class: id === def[0] ? 'active' : '', 'aria-selected': String(id === def[0])}, label)));
  const body = h('section', {id: `view-${def[0]}`});
  el.append(h('h1', {}, c, h('small', {}, ` in ${db}`)), nav, body);
  const container = await api.readContainer(db, c);
  return def[2](body, {db, c, container});
}

async function route() {
  stop();
  stop = () => {};
  const gen = ++generation;
  if (!api.hasKey()) return loginView();
  logout.hidden = false;
  clusterLink.hidden = false;
  const parts = parseRoute();
  setCrumbs(parts);
  const el = clear(main);
  try {
    let result;
    if (parts[0] === 'cluster') result = clusterView(el);
    else if (parts[0] === 'db' && parts.length >= 4 && parts[2] === 'c') result = await containerView(el, parts[1], parts[3], parts[4]);
    else if (parts[0] === 'db' && parts.length >= 2) result = await databaseView(el, parts[1]);
    else result = await databasesView(el);
    if (typeof result === 'function') {
      if (gen === generation) stop = result;
      else result();
    }
  } catch (err) {
    if (err instanceof api.AuthError || (err instanceof api.ApiError && err.status === 401)) return loginView(err.message);
    el.append(note(err.message, 'error'));
  }
}

window.addEventListener('hashchange', route);
window.addEventListener('partita:unauthorized', () => { stop(); loginView('The server refused the key; sign in again.'); });
logout.addEventListener('click', () => { stop(); api.forget(); loginView(); });
route();
