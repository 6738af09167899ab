// The exact exchange behind an http row: headers, pretty-printed bodies, and copy as curl.

import { urls } from './api.js';
import { bytes, fill, h, pretty, toggler } from './dom.js';

const KEY_HEADERS = new Set(['x-platform-chain-id', 'x-platform-message-id']);
const NOT_IN_CURL = new Set(['content-length', 'host', 'accept-encoding', 'connection']);

/** Fill a row's .details panel for an http.request, http.response or http.error event. */
export function httpDetails(panel, event, { call, request }) {
  const p = event.payload;
  const parts = [ids(event, call)];
  if (event.kind === 'http.request') {
    parts.push(h('p', { class: 'target' }, h('code', { class: 'method' }, p.method ?? 'POST'), ' ', h('code', { class: 'url' }, target(p))));
    parts.push(section('headers', headerTable(p.headers)));
    parts.push(bodies(event, call));
    if (Array.isArray(p.warnings) && p.warnings.length) {
      parts.push(section('connector warnings', h('ul', { class: 'warnings-list' }, p.warnings.map((w) => h('li', {}, String(w))))));
    }
  } else if (event.kind === 'http.response') {
    const facts = [`HTTP ${p.status}`];
    if (p.latency_ms !== undefined) facts.push(`${p.latency_ms} ms`);
    if (p.oversized) facts.push('body over the size limit (cut)');
    parts.push(h('p', { class: 'target' }, facts.join(' · ')));
    parts.push(section('response headers', headerTable(p.headers)));
    if (p.request_headers) parts.push(section('request headers, exactly as sent', headerTable(p.request_headers)));
    parts.push(bodies(event, call));
  } else {
    parts.push(h('p', { class: 'target' }, `failed: ${p.error ?? 'error'}`));
    parts.push(section('detail', h('pre', { class: 'body' }, p.detail ?? p.error ?? '')));
  }
  parts.push(tools(event, request));
  fill(panel, parts);
}

function ids(event, call) {
  const p = event.payload;
  const headers = lower(p.headers ?? p.request_headers ?? {});
  const items = [];
  const pair = (name, value) => {
    if (value !== undefined && value !== null && value !== '') {
      items.push(h('dt', {}, name), h('dd', {}, h('code', {}, String(value))));
    }
  };
  pair('message id', p.message_id ?? headers['x-platform-message-id']);
  pair('attempt', p.attempt);
  pair('chain id', headers['x-platform-chain-id'] ?? (call.kind === 'call' ? call.chain_id : null));
  pair('label', p.label);
  pair('token', p.token);
  pair('app id', p.app_id);
  return h('dl', { class: 'ids' }, items);
}

function section(title, ...content) {
  return h('div', { class: 'section' }, h('h4', {}, title), content);
}

function headerTable(headers) {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return h('p', { class: 'muted' }, '(none)');
  return h(
    'table',
    { class: 'headers' },
    h('tbody', {}, entries.map(([name, value]) => h(
      'tr',
      { class: KEY_HEADERS.has(name.toLowerCase()) ? 'key' : null },
      h('th', { scope: 'row' }, name),
      h('td', {}, typeof value === 'string' ? value : JSON.stringify(value)),
    ))),
  );
}

function bodies(event, call) {
  const p = event.payload;
  if (p.parts && typeof p.parts === 'object') {
    return section('multipart body', Object.entries(p.parts).map(([name, part]) => h(
      'div',
      { class: 'part' },
      h('h5', {}, name),
      typeof part === 'string'
        ? h('pre', { class: 'body' }, pretty(part))
        : h('pre', { class: 'body' }, `${part?.content_type ?? 'binary'}, ${bytes(part?.bytes ?? 0)}`),
    )), event.has_blob ? blobLink(event, call, 'the whole multipart body') : null);
  }
  if (p.body === null || p.body === undefined) {
    if (event.has_blob) return section('body', h('pre', { class: 'body muted' }, '(binary)'), blobLink(event, call, 'the body'));
    return section('body', h('pre', { class: 'body muted' }, '(no body)'));
  }
  if (p.body === '') return section('body', h('pre', { class: 'body muted' }, '(empty)'));
  return section('body', h('pre', { class: 'body' }, pretty(p.body)));
}

function blobLink(event, call, what) {
  return h('p', {}, h('a', { href: urls.blob(call.id, event.seq), download: `${call.short_id}-${event.seq}.bin` }, `download ${what}`));
}

function tools(event, request) {
  const bar = h('div', { class: 'tools' });
  const out = [bar];
  if (request) {
    const command = curl(request.payload);
    const status = h('span', { class: 'copied', role: 'status' });
    const fallback = h('pre', { class: 'curl', hidden: true }, command);
    const button = h('button', { type: 'button', class: 'copy-curl', 'data-curl': command }, 'copy as curl');
    button.addEventListener('click', async (e) => {
      e.stopPropagation();
      try {
        await navigator.clipboard.writeText(command);
        status.textContent = 'copied';
      } catch {
        fallback.hidden = false;
        window.getSelection()?.selectAllChildren(fallback);
        status.textContent = 'the clipboard is not available: select and copy';
      }
      setTimeout(() => { status.textContent = ''; }, 2500);
    });
    bar.append(button, status);
    out.push(fallback);
  }
  const raw = rawEvent(event);
  bar.append(raw.button);
  out.push(raw.panel);
  return out;
}

/** A button that shows the stored event as JSON. */
export function rawEvent(event) {
  const button = h('button', { type: 'button', class: 'raw-event' }, 'event JSON');
  const panel = h('pre', { class: 'event-json', hidden: true });
  toggler(button, panel, { onFirstOpen: () => { panel.textContent = JSON.stringify(event, null, 2); } });
  return { button, panel };
}

function target(p) {
  if (p.url) return p.url;
  if (p.path) return `${origin(p.headers)}${p.path}`;
  return '';
}

function origin(headers) {
  const host = lower(headers ?? {}).host;
  return host ? `http://${host}` : location.origin;
}

function lower(headers) {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

const quote = (text) => `'${String(text).replaceAll("'", "'\\''")}'`;

/** The request as a curl command (shell-quoted): method, URL, headers as sent, body. */
export function curl(p) {
  const args = ['curl', '-X', p.method ?? 'POST', quote(target(p))];
  for (const [name, value] of Object.entries(p.headers ?? {})) {
    const lowered = name.toLowerCase();
    if (NOT_IN_CURL.has(lowered) || (p.parts && lowered === 'content-type')) continue;
    args.push('-H', quote(`${name}: ${value}`));
  }
  if (p.parts && typeof p.parts === 'object') {
    for (const [name, part] of Object.entries(p.parts)) {
      if (typeof part === 'string') {
        const literal = part.replaceAll('\\', '\\\\').replaceAll('"', '\\"');
        args.push('-F', quote(`${name}="${literal}";type=application/json`));
      } else {
        const type = part?.content_type ?? 'application/octet-stream';
        args.push('-F', quote(`${name}=@recording${extension(type)};type=${type}`));
      }
    }
  } else if (p.body !== null && p.body !== undefined && p.body !== '') {
    args.push('--data-binary', quote(typeof p.body === 'string' ? p.body : JSON.stringify(p.body)));
  }
  return args.join(' ');
}

function extension(type) {
  return { 'audio/wav': '.wav', 'audio/x-ms-wma': '.wma', 'audio/mpeg': '.mp3' }[type] ?? '.bin';
}
