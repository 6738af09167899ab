// The list of explorations (botemu explore's graphs in the store), newest first; each row opens
// its call-flow page.

import { getJSON, urls } from './api.js';
import { $, dateTime, fill, h, iso } from './dom.js';

export const PAGE = 50;

export class ExplorationsPage {
  constructor(root) {
    this.root = root;
    this.body = $('#explorations tbody', root);
    this.prev = $('#exp-prev', root);
    this.next = $('#exp-next', root);
    this.info = $('#exp-page-info', root);
    this.offset = 0;
    this.request = 0;
    this.prev.addEventListener('click', () => this.load(Math.max(0, this.offset - PAGE)));
    this.next.addEventListener('click', () => this.load(this.offset + PAGE));
    const go = (event) => {
      const row = event.target.closest('tr.exploration');
      if (row && !event.target.closest('a')) location.hash = `#/explorations/${encodeURIComponent(row.dataset.id)}`;
    };
    this.body.addEventListener('click', (event) => {
      if (!window.getSelection()?.toString()) go(event);
    });
    this.body.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') go(event);
    });
  }

  open() {
    document.title = 'botemu · explorations';
    this.load(this.offset);
  }

  close() {
    this.request += 1;
  }

  async load(offset) {
    const number = ++this.request;
    let page;
    try {
      page = await getJSON(urls.explorations({ limit: PAGE, offset }));
    } catch (error) {
      if (number !== this.request) return;
      fill(this.body, h('tr', { class: 'empty' }, h('td', { colspan: 9, class: 'error' }, `Cannot list the explorations: ${error.message}`)));
      return;
    }
    if (number !== this.request) return;
    this.offset = page.offset;
    const rows = page.explorations.map(row);
    if (rows.length === 0) {
      rows.push(h('tr', { class: 'empty' }, h('td', { colspan: 9 },
        'No explorations yet. Run botemu explore --bot URL and its call flow appears here.')));
    }
    fill(this.body, rows);
    const last = page.offset + page.explorations.length;
    this.info.textContent = page.total === 0 ? 'no explorations' : `${page.offset + 1}–${last} of ${page.total}`;
    this.prev.disabled = page.offset === 0;
    this.next.disabled = last >= page.total;
  }
}

function row(e) {
  const href = `#/explorations/${encodeURIComponent(e.id)}`;
  return h(
    'tr',
    { class: 'exploration', 'data-id': e.id, tabindex: 0 },
    h('td', { class: 'id' }, h('a', { href, title: e.id }, e.short_id)),
    h('td', { class: 'bot', title: e.bot }, e.bot),
    h('td', { class: 'started', title: iso(e.started) }, dateTime(e.started)),
    h('td', { class: 'states num' }, String(e.states)),
    h('td', { class: 'edges num' }, String(e.edges)),
    h('td', { class: 'calls num' }, e.calls === null ? '–' : String(e.calls)),
    h('td', { class: `errors num${e.errors ? ' some' : ''}` }, String(e.errors)),
    h('td', { class: `warnings num${e.warnings ? ' some' : ''}` }, String(e.warnings)),
    h('td', { class: 'open' }, h('a', { href, class: 'button' }, 'call flow')),
  );
}
