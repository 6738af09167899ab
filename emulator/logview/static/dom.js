// Building the page from data. Everything a bot sent is untrusted: it only ever becomes a text
// node or an attribute value (textContent, setAttribute), never markup. Nothing here parses HTML.

/**
 * A new element. props: "class", "text" (textContent), "dataset" (an object), "on<event>"
 * (a listener), true (an empty attribute), or any other attribute (set as a string; null,
 * undefined and false are left out). children: nodes and strings (strings become text nodes).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = value;
    else if (name === 'text') el.textContent = String(value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else el.setAttribute(name, value === true ? '' : String(value));
  }
  add(el, children);
  return el;
}

/** Append nodes and strings (as text) to el, skipping null, undefined and false. */
export function add(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replace el's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  return add(el, ...children);
}

export const $ = (selector, root = document) => root.querySelector(selector);

const pad = (n, width = 2) => String(n).padStart(width, '0');

/** Seconds of virtual time: "3.20 s", "1:04.5" past a minute; "–" when there is none. */
export function seconds(value) {
  if (value === null || value === undefined) return '–';
  if (value < 60) return `${value.toFixed(2)} s`;
  const minutes = Math.floor(value / 60);
  return `${minutes}:${(value - minutes * 60).toFixed(1).padStart(4, '0')}`;
}

/** Wall clock (Unix seconds) as local time of day with milliseconds: "14:03:27.412". */
export function clock(unix) {
  const d = new Date(unix * 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Wall clock as a local date and time: "2026-11-20 14:03:27". */
export function dateTime(unix) {
  const d = new Date(unix * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Wall clock as an ISO string, for titles. */
export const iso = (unix) => new Date(unix * 1000).toISOString();

/** How long a call lasted: its virtual duration, else (a conversation) the wall time. */
export function duration(call) {
  if (call.vtime !== null && call.vtime !== undefined) return seconds(call.vtime);
  if (call.ended !== null && call.ended !== undefined) return `${seconds(call.ended - call.started)} wall`;
  return '–';
}

/** A JSON value as indented text; text that is JSON is re-indented, other text kept as it is. */
export function pretty(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

/** A byte count for people: "812 B", "250.0 KiB". */
export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Toggle a hidden panel from a button, keeping aria-expanded in step. */
export function toggler(button, panel, { onFirstOpen } = {}) {
  button.setAttribute('aria-expanded', 'false');
  let opened = false;
  button.addEventListener('click', (event) => {
    event.stopPropagation();
    if (!opened && onFirstOpen) onFirstOpen(panel);
    opened = true;
    panel.hidden = !panel.hidden;
    button.setAttribute('aria-expanded', String(!panel.hidden));
  });
}
