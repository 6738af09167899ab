// The call flow drawn as SVG: a layered layout by dagre (vendor/dagre.min.js, loaded on first
// use), boxes, arrows and labels made here. Every string from the document becomes a text node
// (textContent) or an attribute value (setAttribute): nothing is parsed as markup.

import { BASE } from './api.js';
import { lastPrompt, truncate, waits, wrap } from './flowmodel.js';

const NS = 'http://www.w3.org/2000/svg';
const STATE = { width: 232, height: 74 };
const PROMPT = { width: 34, lines: 2 };
const CHAR = 6.6; // px per character of the labels' font, for the layout's sizes
const MOVE_WIDTH = 30;
const END_WIDTH = 30;

let loading = null;

/** dagre, from the vendored script (a classic script that defines the global `dagre`). */
export function loadDagre() {
  if (window.dagre) return Promise.resolve(window.dagre);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = `${BASE}/static/vendor/dagre.min.js`;
      script.addEventListener('load', () => {
        if (window.dagre) resolve(window.dagre);
        else reject(new Error('the layout library did not load'));
      });
      script.addEventListener('error', () => {
        loading = null;
        script.remove();
        reject(new Error('cannot load the layout library (vendor/dagre.min.js)'));
      });
      document.head.append(script);
    });
  }
  return loading;
}

/** A new SVG element with attributes (null, undefined and false are left out) and children. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') el.textContent = String(value);
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat()) if (child) el.append(child);
  return el;
}

function size(node) {
  if (node.kind === 'state') return STATE;
  if (node.kind === 'start') return { width: 84, height: 32 };
  const said = lastHeard(node);
  const chars = Math.max(truncate(node.reason, END_WIDTH).length, said ? truncate(said, END_WIDTH).length : 0);
  return { width: Math.min(Math.max(chars * CHAR + 22, 76), 230), height: said ? 42 : 26 };
}

/** The last prompt heard before an end (''), as its box shows it. */
function lastHeard(node) {
  const heard = Array.isArray(node.heard) ? node.heard : [];
  return heard.length ? heard[heard.length - 1] : '';
}

/** Positions for `flow` ({nodes, edges} of buildFlow): dagre's layered layout, top to bottom. */
export function layout(dagre, flow) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 46, edgesep: 14, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of flow.nodes) g.setNode(node.key, { ...size(node) });
  for (const arrow of flow.arrows) {
    g.setEdge(arrow.from, arrow.to, { ...labelSize(arrow), labelpos: 'c' }, arrow.key);
  }
  dagre.layout(g);
  const graph = g.graph();
  return {
    width: Math.ceil(graph.width ?? 0),
    height: Math.ceil(graph.height ?? 0),
    node: (key) => g.node(key),
    arrow: (arrow) => g.edge({ v: arrow.from, w: arrow.to, name: arrow.key }),
  };
}

function curve(points) {
  const ok = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  if (ok.length === 0) return '';
  let d = `M${ok[0].x},${ok[0].y}`;
  for (let i = 1; i < ok.length - 1; i += 1) {
    const next = ok[i + 1];
    const mid = i + 1 === ok.length - 1 ? next : { x: (ok[i].x + next.x) / 2, y: (ok[i].y + next.y) / 2 };
    d += ` Q${ok[i].x},${ok[i].y} ${mid.x},${mid.y}`;
  }
  if (ok.length === 2) d += ` L${ok[1].x},${ok[1].y}`;
  return d;
}

function marker(id) {
  return s('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head' }));
}

function nodeBox(node, box) {
  const x = box.x - box.width / 2;
  const y = box.y - box.height / 2;
  const classes = ['node', node.kind];
  if (node.severity) classes.push(`sev-${node.severity}`);
  const g = s('g', {
    class: classes.join(' '), 'data-kind': node.kind, 'data-id': node.id, 'data-key': node.key,
    transform: `translate(${x},${y})`, tabindex: 0, role: 'button',
  });
  if (node.kind === 'state') {
    const title = `${waits(node.state)}`;
    const lines = wrap(lastPrompt(node.state) || '(no prompt)', PROMPT.width, PROMPT.lines);
    g.append(
      s('rect', { class: 'box', width: box.width, height: box.height, rx: 7 }),
      s('text', { class: 'kind', x: 10, y: 18, text: title }),
      s('text', { class: 'state-id', x: box.width - 10, y: 18, 'text-anchor': 'end', text: node.id.slice(0, 12) }),
      ...lines.map((line, i) => s('text', { class: 'prompt', x: 10, y: 38 + i * 16, text: line })),
      s('title', { text: `${title}: ${lastPrompt(node.state)}` }),
    );
    if (node.findings.length) {
      g.append(s('g', { class: 'finding-badge', transform: `translate(${box.width - 2},2)` },
        s('circle', { r: 10 }), s('text', { 'text-anchor': 'middle', y: 4, text: String(node.findings.length) }),
        s('title', { text: node.findings.map((f) => `${f.severity}: ${f.rule}: ${f.message}`).join('\n') })));
    }
  } else {
    const label = node.kind === 'start' ? 'start' : truncate(node.reason, END_WIDTH);
    const said = node.kind === 'end' ? lastHeard(node) : '';
    const heard = said ? `\nheard: ${node.heard.join(' / ')}` : '';
    g.append(
      s('rect', { class: 'box', width: box.width, height: box.height, rx: said ? 12 : box.height / 2 }),
      s('text', { class: 'label', x: box.width / 2, y: said ? 16 : box.height / 2 + 4, 'text-anchor': 'middle', text: label }),
      said ? s('text', { class: 'heard', x: box.width / 2, y: 33, 'text-anchor': 'middle', text: truncate(said, END_WIDTH) }) : null,
      s('title', { text: node.kind === 'start' ? 'the call placed' : `end: ${node.reason}${heard}` }),
    );
  }
  return g;
}

const CHIP = { height: 18, gap: 3 };
export const MAX_CHIPS = 12;

/** The moves an arrow's label shows (MAX_CHIPS at most, the last one saying how many more). */
function chips(arrow) {
  if (arrow.moves.length <= MAX_CHIPS) return { shown: arrow.moves, more: 0 };
  return { shown: arrow.moves.slice(0, MAX_CHIPS - 1), more: arrow.moves.length - (MAX_CHIPS - 1) };
}

function labelSize(arrow) {
  const { shown, more } = chips(arrow);
  const texts = [...shown.map((m) => truncate(m.move, MOVE_WIDTH)), ...(more ? [`+${more} more`] : [])];
  const width = Math.max(...texts.map((t) => [...t].length)) * CHAR + 12;
  return { width, height: texts.length * (CHIP.height + CHIP.gap) - CHIP.gap };
}

function chip(move, width, y) {
  const title = `${move.move} (${move.steps})${move.callId ? ` · opens call ${move.callId.slice(0, 12)}` : ''}`
    + move.errors.map((f) => `\n${f.rule ?? '?'}: ${f.message ?? ''}`).join('');
  const classes = ['move'];
  if (move.errors.length) classes.push('error');
  if (move.findings.length) classes.push('has-finding');
  return s('g', {
    class: classes.join(' '), 'data-call-id': move.callId, 'data-key': move.key, 'data-move': move.move,
    transform: `translate(0,${y})`, tabindex: 0, role: 'link',
  }, s('rect', { width, height: CHIP.height, rx: 4 }),
  s('text', { x: width / 2, y: 13, 'text-anchor': 'middle', text: truncate(move.move, MOVE_WIDTH) }),
  s('title', { text: title }));
}

/** A move back to the same box: out of its right side to the label, and back in. (dagre's
 * own points for a self-loop start where its label's width puts them, off the box.) */
function loop(box, at, width) {
  const right = box.x + box.width / 2;
  const out = Math.max(at.x - width / 2 - 4, right + 24);
  const bend = right + (out - right) * 1.2;
  return `M${right},${box.y - 14} C${bend},${box.y - 34} ${bend},${box.y + 34} ${right + 1},${box.y + 14}`;
}

function arrowShape(arrow, at, box) {
  const { width, height } = labelSize(arrow);
  const { shown, more } = chips(arrow);
  const label = s('g', { class: 'edge-label', transform: `translate(${at.x - width / 2},${at.y - height / 2})` },
    shown.map((move, i) => chip(move, width, i * (CHIP.height + CHIP.gap))));
  if (more) {
    label.append(s('g', { class: 'more', 'data-from': arrow.from, transform: `translate(0,${shown.length * (CHIP.height + CHIP.gap)})`, tabindex: 0, role: 'button' },
      s('rect', { width, height: CHIP.height, rx: 4 }),
      s('text', { x: width / 2, y: 13, 'text-anchor': 'middle', text: `+${more} more` }),
      s('title', { text: 'every move is listed in the panel of the box it starts from' })));
  }
  return s('g', { class: `arrow${arrow.error ? ' error' : ''}`, 'data-key': arrow.key },
    s('path', { class: 'line', d: box ? loop(box, at, width) : curve(at.points ?? []), 'marker-end': `url(#${arrow.error ? 'arrow-error' : 'arrow'})` }),
    label);
}

/** The SVG of `flow` laid out by `placed` (layout()). */
export function draw(flow, placed) {
  const svg = s('svg', {
    class: 'flow-graph', xmlns: NS, width: placed.width, height: placed.height,
    viewBox: `0 0 ${placed.width} ${placed.height}`, role: 'img', 'aria-label': 'call flow',
  });
  svg.append(s('defs', {}, marker('arrow'), marker('arrow-error')));
  const edges = s('g', { class: 'edges' });
  for (const arrow of flow.arrows) {
    const at = placed.arrow(arrow);
    if (at) edges.append(arrowShape(arrow, at, arrow.from === arrow.to ? placed.node(arrow.from) : null));
  }
  const nodes = s('g', { class: 'nodes' });
  for (const node of flow.nodes) nodes.append(nodeBox(node, placed.node(node.key)));
  svg.append(edges, nodes);
  svg.querySelector('#arrow-error').classList.add('error');
  return svg;
}
