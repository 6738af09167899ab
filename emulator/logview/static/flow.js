// The call-flow page of one exploration (#/explorations/<id>): the graph drawn as boxes and
// arrows (flowsvg.js), a side panel (flowpanel.js). A box is a state, the start or an end of
// calls; an arrow is a move, labelled with it; clicking an arrow opens the call that took it.

import { ApiError, getJSON, urls } from './api.js';
import { $, dateTime, fill, h, iso } from './dom.js';
import { MAX_EDGES, MAX_NODES, buildFlow } from './flowmodel.js';
import { nodePanel, overviewPanel } from './flowpanel.js';
import { draw, layout, loadDagre } from './flowsvg.js';

const FIT_SCALE = 0.7; // a graph wider than the page is drawn fitted when that keeps its text readable

export class FlowPage {
  constructor(root) {
    this.root = root;
    this.head = $('#flow-head', root);
    this.problem = $('#flow-error', root);
    this.note = $('#flow-note', root);
    this.canvas = $('#flow', root);
    this.panel = $('#flow-panel', root);
    this.fitButton = $('#flow-fit', root);
    this.fitButton.addEventListener('click', () => this.fitted(!this.canvas.classList.contains('fit')));
    this.request = 0;
    this.flow = null;
    this.document = null;
    this.rules = {};
    this.canvas.addEventListener('click', (event) => this.clicked(event));
    this.canvas.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        this.clicked(event);
      }
    });
  }

  async open(id) {
    const number = ++this.request;
    this.flow = null;
    this.problem.hidden = true;
    this.note.hidden = true;
    this.fitButton.hidden = true;
    fill(this.canvas);
    fill(this.panel);
    fill(this.head, h('p', { class: 'muted' }, 'loading…'));
    document.title = 'botemu · call flow';
    let detail;
    let dagre;
    try {
      [detail, dagre] = await Promise.all([getJSON(urls.exploration(id)), loadDagre()]);
    } catch (error) {
      if (number !== this.request) return;
      fill(this.head);
      this.problem.textContent = error instanceof ApiError && error.status === 404
        ? `There is no exploration with id ${id} in this database.`
        : `Cannot show exploration ${id}: ${error.message}`;
      this.problem.hidden = false;
      return;
    }
    if (number !== this.request) return;
    this.show(detail, dagre, number);
  }

  close() {
    this.request += 1;
  }

  async show(detail, dagre, number) {
    const { exploration, document: doc } = detail;
    this.document = doc && typeof doc === 'object' ? doc : {};
    this.rules = detail.rules ?? {};
    this.flow = buildFlow(this.document);
    document.title = `botemu · call flow ${exploration.short_id}`;
    this.header(exploration);
    if (this.flow.cut) {
      const { nodes, edges } = this.flow.total;
      this.note.textContent = `The graph is cut: ${this.flow.nodes.length} of ${nodes} boxes and `
        + `${this.flow.edges.length} of ${edges} moves are drawn (this page draws at most `
        + `${MAX_NODES} boxes and ${MAX_EDGES} moves, in the order the crawl found them).`;
      this.note.hidden = false;
    }
    fill(this.canvas, h('p', { class: 'muted laying-out' },
      `laying out ${this.flow.nodes.length} boxes and ${this.flow.edges.length} moves…`));
    await new Promise((resolve) => { setTimeout(resolve, 20); }); // let the message show first
    if (number !== this.request) return;
    try {
      const placed = layout(dagre, this.flow);
      fill(this.canvas, draw(this.flow, placed));
      const scale = this.canvas.clientWidth / Math.max(placed.width, 1);
      this.fitButton.hidden = scale >= 1;
      this.fitted(scale < 1 && scale >= FIT_SCALE);
    } catch (error) {
      fill(this.canvas);
      this.problem.textContent = `Cannot draw this call flow: ${error.message}`;
      this.problem.hidden = false;
    }
    this.select(null);
  }

  /** Draw the graph scaled to the width of the page (fit) or at its own size. */
  fitted(fit) {
    this.canvas.classList.toggle('fit', fit);
    this.fitButton.textContent = fit ? 'actual size' : 'fit to width';
    this.fitButton.setAttribute('aria-pressed', String(fit));
  }

  header(exploration) {
    const fact = (name, value, cls, outer) => h('div', { class: outer ?? 'fact' }, h('dt', {}, name), h('dd', { class: cls ?? null }, value));
    fill(
      this.head,
      h('h1', {}, h('span', { class: 'badge' }, 'call flow'), ' ', h('span', { class: 'call-bot' }, exploration.bot)),
      h('dl', { class: 'facts flow-facts' },
        fact('id', h('code', {}, exploration.id), null, 'fact wide'),
        fact('started', h('span', { title: iso(exploration.started) }, dateTime(exploration.started)), null, 'fact wide'),
        fact('states', String(exploration.states)),
        fact('moves', String(exploration.edges)),
        fact('calls', exploration.calls === null ? '–' : String(exploration.calls)),
        fact('errors', String(exploration.errors), exploration.errors ? 'fact-errors some' : 'fact-errors'),
        fact('warnings', String(exploration.warnings), exploration.warnings ? 'fact-warnings some' : 'fact-warnings')),
    );
  }

  clicked(event) {
    if (!this.flow) return;
    const move = event.target.closest?.('g.move');
    if (move) {
      const callId = move.getAttribute('data-call-id');
      if (callId) location.hash = `#/calls/${encodeURIComponent(callId)}`;
      return;
    }
    const more = event.target.closest?.('g.more');
    const box = event.target.closest?.('g.node');
    if (more) this.select(more.getAttribute('data-from'));
    else if (box || event.type === 'click') this.select(box ? box.getAttribute('data-key') : null);
  }

  select(key) {
    for (const el of this.canvas.querySelectorAll('g.node.selected')) el.classList.remove('selected');
    const node = key === null ? null : this.flow.nodes.find((n) => n.key === key);
    if (!node) {
      fill(this.panel, overviewPanel(this.flow, this.document, this.rules));
      return;
    }
    for (const el of this.canvas.querySelectorAll('g.node')) {
      if (el.getAttribute('data-key') === key) el.classList.add('selected');
    }
    fill(this.panel, h('button', { type: 'button', class: 'quiet panel-close', onclick: () => this.select(null) }, '× overview'),
      nodePanel(this.flow, node, this.rules));
  }
}
