// The list page: calls and conversations, newest first, filtered and paged; live.

import { getJSON, urls } from './api.js';
import { $, dateTime, duration, fill, h, iso } from './dom.js';

export const PAGE = 50;
const REFRESH_MS = 300; // at most one reload per this many ms while calls change

/** The list's state as it appears in the address: #/?text=..&reason=..&findings=1&kind=..&offset=.. */
export function parseState(query) {
  const params = new URLSearchParams(query);
  const offset = Number.parseInt(params.get('offset') ?? '0', 10);
  return {
    text: params.get('text') ?? '',
    reason: params.get('reason') ?? '',
    findings: params.get('findings') === '1',
    kind: params.get('kind') ?? '',
    offset: Number.isFinite(offset) && offset > 0 ? offset : 0,
  };
}

export function stateHash(state) {
  const params = new URLSearchParams();
  if (state.text) params.set('text', state.text);
  if (state.reason) params.set('reason', state.reason);
  if (state.findings) params.set('findings', '1');
  if (state.kind) params.set('kind', state.kind);
  if (state.offset) params.set('offset', String(state.offset));
  const query = params.toString();
  return query ? `#/?${query}` : '#/';
}

export class ListPage {
  constructor(root) {
    this.root = root;
    this.body = $('#calls tbody', root);
    this.text = $('#filter-text', root);
    this.outcome = $('#filter-outcome', root);
    this.findings = $('#filter-findings', root);
    this.kind = $('#filter-kind', root);
    this.prev = $('#prev', root);
    this.next = $('#next', root);
    this.info = $('#page-info', root);
    this.state = parseState('');
    this.shown = new Set(); // ids on the page, to mark the ones that arrive
    this.request = 0;
    this.timer = null;
    this.visible = false;
    this.total = 0;

    let typing = null;
    this.text.addEventListener('input', () => {
      clearTimeout(typing);
      typing = setTimeout(() => this.go({ text: this.text.value, offset: 0 }), 250);
    });
    $('#filters', root).addEventListener('submit', (event) => {
      event.preventDefault();
      this.go({ text: this.text.value, offset: 0 });
    });
    this.outcome.addEventListener('change', () => this.go({ reason: this.outcome.value, offset: 0 }));
    this.findings.addEventListener('change', () => this.go({ findings: this.findings.checked, offset: 0 }));
    this.kind.addEventListener('change', () => this.go({ kind: this.kind.value, offset: 0 }));
    this.prev.addEventListener('click', () => this.go({ offset: Math.max(0, this.state.offset - PAGE) }));
    this.next.addEventListener('click', () => this.go({ offset: this.state.offset + PAGE }));
    this.body.addEventListener('click', (event) => {
      const row = event.target.closest('tr.call');
      if (row && !event.target.closest('a') && !window.getSelection()?.toString()) {
        location.hash = `#/calls/${encodeURIComponent(row.dataset.id)}`;
      }
    });
    this.body.addEventListener('keydown', (event) => {
      const row = event.target.closest('tr.call');
      if (row && event.key === 'Enter') location.hash = `#/calls/${encodeURIComponent(row.dataset.id)}`;
    });
  }

  /** The address of the list as it is now (for the call page's back link). */
  get hash() {
    return stateHash(this.state);
  }

  /** Show the list for the state in the address. */
  open(query) {
    this.visible = true;
    this.state = parseState(query);
    if (document.activeElement !== this.text) this.text.value = this.state.text;
    this.outcome.value = this.state.reason;
    if (this.outcome.value !== this.state.reason) {
      // an outcome the menu does not list (from an address): offer it, so the filter shows
      this.outcome.append(h('option', { value: this.state.reason }, this.state.reason));
      this.outcome.value = this.state.reason;
    }
    this.findings.checked = this.state.findings;
    this.kind.value = this.state.kind;
    document.title = 'botemu · log view';
    this.load({ fresh: false });
  }

  close() {
    this.visible = false;
  }

  go(change) {
    const state = { ...this.state, ...change };
    const hash = stateHash(state);
    if (hash === location.hash || (hash === '#/' && !location.hash)) {
      this.state = state;
      this.load({ fresh: false });
    } else {
      location.hash = hash; // the router calls open()
    }
  }

  /** A call changed (the event stream): reload the page soon, marking new rows. */
  changed() {
    if (!this.visible || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.load({ fresh: true });
    }, REFRESH_MS);
  }

  async load({ fresh }) {
    const number = ++this.request;
    const { text, reason, findings, kind, offset } = this.state;
    let page;
    try {
      page = await getJSON(
        urls.calls({ limit: PAGE, offset, text, reason, has_findings: findings, kind }),
      );
    } catch (error) {
      if (number !== this.request) return;
      fill(this.body, h('tr', { class: 'empty' }, h('td', { colspan: 12, class: 'error' }, `Cannot list the calls: ${error.message}`)));
      return;
    }
    if (number !== this.request) return; // a newer request is on its way
    if (page.calls.length === 0 && page.total > 0 && offset > 0) {
      this.go({ offset: Math.max(0, Math.floor((page.total - 1) / PAGE) * PAGE) });
      return;
    }
    this.render(page, fresh);
  }

  render(page, fresh) {
    const filtered = this.state.text || this.state.reason || this.state.findings || this.state.kind;
    const rows = page.calls.map((call) => row(call, fresh && !this.shown.has(call.id)));
    if (rows.length === 0) {
      const message = filtered
        ? 'No call matches these filters.'
        : 'No calls yet. Place one (botemu call, botemu chat, botemu test) and it appears here.';
      rows.push(h('tr', { class: 'empty' }, h('td', { colspan: 12 }, message)));
    }
    fill(this.body, rows);
    this.shown = new Set(page.calls.map((call) => call.id));
    this.total = page.total;
    const first = page.total === 0 ? 0 : page.offset + 1;
    const last = page.offset + page.calls.length;
    this.info.textContent = page.total === 0
      ? 'no calls'
      : `${first}–${last} of ${page.total.toLocaleString('en')}`;
    this.prev.disabled = page.offset === 0;
    this.next.disabled = last >= page.total;
  }
}

function endTitle(call) {
  if (call.end_reason === 'interrupted') return 'its writer was killed or crashed before the call ended';
  return call.end_reason === null ? 'still running' : call.end_reason;
}

function row(call, fresh) {
  const classes = ['call', call.kind === 'conversation' ? 'conversation' : 'phone'];
  if (fresh) classes.push('fresh');
  if (call.end_reason === null) classes.push('running');
  // a call whose writer was killed or crashed before it ended (docs/transcripts.md)
  if (call.end_reason === 'interrupted') classes.push('interrupted');
  const verdict = call.passed === null ? '' : call.passed ? 'pass' : 'fail';
  return h(
    'tr',
    { class: classes.join(' '), 'data-id': call.id, tabindex: 0 },
    h('td', { class: 'kind' }, h('span', { class: 'badge' }, call.kind === 'conversation' ? 'chat' : 'call')),
    h('td', { class: 'id' }, h('a', { href: `#/calls/${encodeURIComponent(call.id)}`, title: call.id }, call.short_id)),
    h('td', { class: 'bot', title: call.bot }, call.bot),
    h('td', { class: 'caller' }, call.caller ?? '–'),
    h('td', { class: 'started', title: iso(call.started) }, dateTime(call.started)),
    h('td', { class: 'duration', title: call.vtime === null ? 'wall time' : 'virtual time' }, duration(call)),
    h('td', { class: 'ended', title: endTitle(call) }, call.end_reason ?? 'running'),
    h('td', { class: 'workflows num' }, String(call.workflows)),
    h('td', { class: `errors num${call.errors ? ' some' : ''}` }, String(call.errors)),
    h('td', { class: `warnings num${call.warnings ? ' some' : ''}` }, String(call.warnings)),
    h('td', { class: 'scenario' }, call.scenario ?? ''),
    h('td', { class: `verdict ${verdict}` }, verdict),
  );
}
