// The log view's JSON API and its event stream (emulator/logview/routes.py).

export const BASE = '/_logview';
const API = `${BASE}/api`;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function getJSON(url, { signal } = {}) {
  const response = await fetch(url, { signal, headers: { Accept: 'application/json' } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, body?.error ?? response.statusText);
  return body;
}

const enc = encodeURIComponent;

export const urls = {
  calls(filters) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(filters)) {
      if (value !== '' && value !== null && value !== undefined && value !== false) {
        query.set(name, value === true ? '1' : String(value));
      }
    }
    return `${API}/calls?${query}`;
  },
  call: (id, after = 0) => `${API}/calls/${enc(id)}${after ? `?after=${after}` : ''}`,
  blob: (id, seq) => `${API}/calls/${enc(id)}/events/${seq}/blob`,
  export: (id, format) => `${API}/calls/${enc(id)}/export?format=${format}`,
  audio: (id) => `${API}/calls/${enc(id)}/audio`,
  scenario: (id, { strict = false, format = 'yaml', download = false } = {}) => {
    const query = new URLSearchParams({ strict: strict ? '1' : '0' });
    if (format !== 'yaml') query.set('format', format);
    if (download) query.set('download', '1');
    return `${API}/calls/${enc(id)}/scenario?${query}`;
  },
  explorations: ({ limit, offset }) => `${API}/explorations?limit=${limit}&offset=${offset}`,
  exploration: (id) => `${API}/explorations/${enc(id)}`,
  rules: `${BASE}/docs/rules.md`,
  stream: `${API}/stream`,
};

/**
 * Follow the store live. onChange({id, seq}) for every call created, appended to or ended;
 * onState("live" | "reconnecting" | "off"). The browser reconnects by itself.
 */
export function watch({ onChange, onState }) {
  const source = new EventSource(urls.stream);
  source.addEventListener('hello', (event) => {
    onState(JSON.parse(event.data).live ? 'live' : 'off');
  });
  source.addEventListener('calls', (event) => onChange(JSON.parse(event.data)));
  source.addEventListener('error', () => {
    onState(source.readyState === EventSource.CLOSED ? 'off' : 'reconnecting');
  });
  return source;
}
