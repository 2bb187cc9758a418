// Building the page from data. Everything the server returns is set as text, never parsed as
// HTML, so an item's content cannot inject markup or script.

const SVG = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else if (k in el && !(el instanceof SVGElement)) el[k] = v; // properties: value, disabled, ...
    else if (v !== false) el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// h makes an HTML element: h('a', {href: '#/', class: 'x', onclick: fn}, 'text', child).
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s makes an SVG element.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let u = -1;
  do { n /= 1024; u++; } while (n >= 1024 && u < units.length - 1);
  return `${n.toFixed(n < 10 ? 1 : 0)} ${units[u]}`;
}

export function num(n, digits = 0) {
  return Number(n).toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: 0});
}

export function pct(x) {
  return `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;
}

// shortEPK abbreviates a hex EPK for labels.
export function shortEPK(hex) {
  if (hex === '') return '""';
  return hex.length > 10 ? hex.slice(0, 10) + '…' : hex;
}

// message shows a note or an error in a box.
export function note(text, kind = 'info') {
  return h('p', {class: `note ${kind}`, role: kind === 'error' ? 'alert' : 'status'}, text);
}

// rerender draws the current view again.
export function rerender() {
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

// guarded wraps a click handler so that its failure is shown, not lost.
export function guarded(fn) {
  return async e => {
    try { await fn(e); } catch (err) { alert(err.message); }
  };
}
