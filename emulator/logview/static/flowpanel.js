// The call-flow page's side panel: the exploration at a glance, or the node clicked (a state's
// prompts and choices, where each move from it led and the call that took it, its findings).

import { findingCard } from './finding.js';
import { waits } from './flowmodel.js';
import { h } from './dom.js';

const callLink = (callId, text) => (callId
  ? h('a', { class: 'call-link', href: `#/calls/${encodeURIComponent(callId)}`, title: `call ${callId}` }, text)
  : h('span', { class: 'muted' }, 'no call'));

function where(flow, key) {
  const node = flow.nodes.find((n) => n.key === key);
  if (!node) return '?';
  if (node.kind === 'start') return 'start';
  if (node.kind === 'end') return `end: ${node.reason}`;
  return `${waits(node.state)} [${node.id.slice(0, 12)}]`;
}

function moves(flow, list, direction) {
  if (list.length === 0) return null;
  return h('section', { class: `panel-moves ${direction}` },
    h('h3', {}, direction === 'out' ? `moves (${list.length})` : `reached by (${list.length})`),
    h('ul', { class: 'moves' }, list.slice(0, MAX_LISTED).map((edge) => h('li', { class: `move${edge.errors.length ? ' error' : ''}`, 'data-call-id': edge.callId },
      h('span', { class: 'move-name' }, edge.move), ' → ',
      h('span', { class: 'move-to' }, where(flow, direction === 'out' ? edge.to : edge.from)), ' ',
      callLink(edge.callId, 'call')))), more(list));
}

const MAX_LISTED = 200; // findings or moves listed in one section of the panel

function more(list) {
  return list.length > MAX_LISTED
    ? h('p', { class: 'muted more-listed' }, `… and ${list.length - MAX_LISTED} more`)
    : null;
}

function findings(list, rules, title = 'findings') {
  if (list.length === 0) return null;
  return h('section', { class: 'panel-findings' },
    h('h3', {}, `${title} (${list.length})`),
    list.slice(0, MAX_LISTED).map((f) => findingCard(f, rules)), more(list));
}

function choices(state) {
  const items = Array.isArray(state.choices) ? state.choices : [];
  if (items.length === 0) return null;
  return h('section', {},
    h('h3', {}, `choices (${items.length})`),
    h('ul', { class: 'choices' }, items.map((c) => h('li', { class: 'choice' },
      h('span', { class: 'name' }, typeof c?.name === 'string' ? c.name : '?'),
      typeof c?.dtmf === 'string' ? h('span', { class: 'dtmf', title: 'DTMF key' }, c.dtmf) : null,
      Array.isArray(c?.speech) && c.speech.length
        ? h('span', { class: 'speech', title: 'speech' }, c.speech.filter((x) => typeof x === 'string').join(' · '))
        : null))));
}

function facts(state) {
  const rows = [];
  if (Number.isInteger(state.max_digits)) rows.push(['max digits', String(state.max_digits)]);
  if (Array.isArray(state.stop_tones) && state.stop_tones.length) rows.push(['stop tones', state.stop_tones.join(' ')]);
  if (typeof state.heard_seconds === 'number') rows.push(['heard before', `${state.heard_seconds.toFixed(1)} s`]);
  return h('dl', { class: 'panel-facts' }, rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

/** The panel for `node` of `flow`; rules: rule id -> {severity, source, summary}. */
export function nodePanel(flow, node, rules) {
  const out = flow.edges.filter((e) => e.from === node.key);
  const into = flow.edges.filter((e) => e.to === node.key);
  if (node.kind === 'start') {
    return [h('h2', {}, 'start'), h('p', { class: 'muted' }, 'The call placed: each path is a fresh call from here.'), moves(flow, out, 'out')];
  }
  if (node.kind === 'end') {
    const heard = Array.isArray(node.heard) ? node.heard : [];
    return [
      h('h2', {}, h('span', { class: 'badge' }, 'end'), ' ', h('span', { class: 'end-reason' }, node.reason)),
      h('section', { class: 'panel-heard' },
        h('h3', {}, `heard after the last input (${heard.length})`),
        heard.length
          ? h('ol', { class: 'prompts' }, heard.map((p) => h('li', { class: 'prompt heard' }, p)))
          : h('p', { class: 'muted' }, 'nothing')),
      moves(flow, into, 'in'),
    ];
  }
  const state = node.state;
  const prompts = (Array.isArray(state.prompts) ? state.prompts : []).filter((p) => typeof p === 'string');
  return [
    h('h2', {}, h('span', { class: 'badge' }, waits(state)), ' ', h('code', { class: 'state-id' }, node.id)),
    findings(node.findings, rules),
    h('section', {},
      h('h3', {}, `prompts (${prompts.length})`),
      prompts.length
        ? h('ol', { class: 'prompts' }, prompts.map((p) => h('li', { class: 'prompt' }, p)))
        : h('p', { class: 'muted' }, 'no prompt')),
    choices(state),
    facts(state),
    moves(flow, out, 'out'),
    moves(flow, into, 'in'),
  ];
}

/** The panel when nothing is selected: how to read the page, and the findings no box shows. */
export function overviewPanel(flow, document, rules) {
  const errorEdges = flow.edges.filter((e) => e.errors.length);
  const bounds = (Array.isArray(document.bounds) ? document.bounds : []).filter((b) => typeof b === 'string');
  return [
    h('h2', {}, 'call flow'),
    h('p', { class: 'muted hint' }, 'Click a box for its prompts and choices; click a move to open the call that took it.'),
    bounds.length ? h('p', { class: 'bounds' }, `bounds hit: ${bounds.join(', ')}`) : null,
    errorEdges.length
      ? h('section', {}, h('h3', {}, `moves that crashed the bot (${errorEdges.length})`),
        h('ul', { class: 'moves' }, errorEdges.slice(0, MAX_LISTED).map((e) => h('li', { class: 'move error', 'data-call-id': e.callId },
          h('span', { class: 'move-name' }, e.steps), ' ', callLink(e.callId, 'call')))), more(errorEdges))
      : null,
    findings(flow.edges.flatMap((e) => e.findings), rules, 'findings on moves'),
    findings(flow.nodes.flatMap((n) => n.findings), rules, 'findings on states'),
    findings(flow.loose, rules, 'other findings'),
  ];
}
