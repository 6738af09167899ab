// The call flow as boxes and arrows, from an exploration's document (botemu explore --json,
// format 2, or 1 without `heard`; docs/explore.md): which nodes and edges the page draws, and what marks them. Pure:
// no DOM. Everything in a document came from a bot or a file, so nothing here trusts its shape:
// a member of the wrong type is read as missing, and unknown members are ignored.

export const MAX_NODES = 500;
export const MAX_EDGES = 1500;
export const START = 'start';

const text = (value, fallback = '') => (typeof value === 'string' ? value : fallback);
const list = (value) => (Array.isArray(value) ? value : []);
const object = (value) => (value && typeof value === 'object' && !Array.isArray(value) ? value : null);
const RANK = { error: 3, warning: 2, info: 1 };

/** The worst severity among findings ('' for none). */
export function worst(findings) {
  let best = '';
  for (const f of findings) {
    const severity = text(f.severity);
    if ((RANK[severity] ?? 0) > (RANK[best] ?? 0)) best = severity;
  }
  return best;
}

/** What a state waits for, in a few words: "menu · 3 choices", "digits · up to 8", "record". */
export function waits(state) {
  const kind = text(state.kind, '?');
  if (kind === 'recognize') {
    const n = list(state.choices).length;
    return `menu · ${n} choice${n === 1 ? '' : 's'}`;
  }
  if (kind === 'digits') {
    return Number.isInteger(state.max_digits) ? `digits · up to ${state.max_digits}` : 'digits';
  }
  return kind;
}

/** The last prompt a state plays ('' when none). */
export function lastPrompt(state) {
  const prompts = list(state.prompts).filter((p) => typeof p === 'string');
  return prompts.length ? prompts[prompts.length - 1] : '';
}

/** What the caller heard after the last input of an edge that ended the call (strings only). */
export function heardOf(edge) {
  return list(edge.heard).filter((p) => typeof p === 'string');
}

/** The steps of an edge as one line, as EXPLORE-CRASH-PATH's `where` names them. */
export function stepsLine(edge) {
  const steps = list(edge.steps).filter((s) => typeof s === 'string');
  return steps.length ? steps.join('; ') : '(the call placed)';
}

/**
 * The moves between the same two nodes, as one arrow: [{key, from, to, moves, error}], in the
 * order of their first move.
 */
export function arrowsOf(edges) {
  const byPair = new Map();
  for (const edge of edges) {
    const pair = `${edge.from}\u0001${edge.to}`;
    let arrow = byPair.get(pair);
    if (!arrow) {
      arrow = { key: `a${byPair.size}`, from: edge.from, to: edge.to, moves: [], error: false };
      byPair.set(pair, arrow);
    }
    arrow.moves.push(edge);
    arrow.error ||= edge.errors.length > 0;
  }
  return [...byPair.values()];
}

/**
 * The drawing of `document`: {nodes, edges, arrows, loose, total: {nodes, edges}, cut}.
 * Nodes: the start, each state ({kind: 'state', state, findings, severity}) and one end node per
 * (state, end reason, prompts heard after the last input) that ended calls ({kind: 'end',
 * reason, heard}). Edges: every move whose both ends
 * are drawn ({from, to, move, callId, steps, errors, findings}), and the arrows they make
 * (arrowsOf: one per pair of nodes, labelled with its moves). Nodes are taken in path order
 * (breadth-first, as the crawl found them) up to MAX_NODES, and edges up to MAX_EDGES; `cut` says
 * whether anything was left out. `loose`: findings that name neither a drawn state nor a move.
 */
export function buildFlow(document) {
  const states = new Map();
  for (const raw of list(document.states)) {
    const state = object(raw);
    const id = text(state?.id);
    if (id && !states.has(id)) states.set(id, state);
  }
  const edgesIn = list(document.edges).map(object).filter(Boolean);
  const findings = list(document.findings).map(object).filter(Boolean);

  const nodes = new Map();
  const total = new Set([START, ...[...states.keys()].map((id) => `s:${id}`)]);
  const add = (key, make) => {
    if (!nodes.has(key) && nodes.size < MAX_NODES) nodes.set(key, { key, ...make() });
    return nodes.has(key);
  };
  const stateNode = (id) => ({
    kind: 'state', id, state: states.get(id), findings: [], severity: '',
  });
  add(START, () => ({ kind: 'start', id: START, findings: [], severity: '' }));

  const edges = [];
  let dropped = 0;
  edgesIn.forEach((edge, index) => {
    const from = text(edge.from);
    const fromKey = from === START ? START : states.has(from) ? `s:${from}` : null;
    const to = text(edge.to, null);
    const reason = text(edge.end, 'ended');
    const heard = heardOf(edge);
    let toKey = null;
    if (to !== null) toKey = states.has(to) ? `s:${to}` : null;
    else if (fromKey !== null) toKey = `e:${fromKey}\u0000${reason}\u0000${heard.join('\u0001')}`;
    if (fromKey === null || toKey === null) return; // names a state the document does not hold
    total.add(toKey);
    const drawn = add(fromKey, () => stateNode(from))
      && add(toKey, () => (to !== null ? stateNode(to) : { kind: 'end', id: reason, reason, heard, findings: [], severity: '' }));
    if (!drawn || edges.length >= MAX_EDGES) {
      dropped += 1;
      return;
    }
    const errors = list(edge.errors).map(object).filter(Boolean);
    edges.push({
      key: `m${index}`, index, from: fromKey, to: toKey, move: text(edge.move, '?'),
      callId: text(edge.call_id), steps: stepsLine(edge), errors, findings: [],
    });
  });
  for (const id of states.keys()) add(`s:${id}`, () => stateNode(id)); // reached by no move

  const loose = [];
  const byCall = new Map(edges.filter((e) => e.callId).map((e) => [`call ${e.callId}`, e]));
  const bySteps = new Map(edges.map((e) => [e.steps, e]));
  for (const finding of findings) {
    const where = text(finding.where);
    const node = nodes.get(`s:${where}`);
    const edge = node ? null : byCall.get(text(finding.evidence)) ?? bySteps.get(where);
    if (node) node.findings.push(finding);
    else if (edge) edge.findings.push(finding);
    else loose.push(finding);
  }
  for (const node of nodes.values()) node.severity = worst(node.findings);
  const edgeTotal = edgesIn.length;
  return {
    nodes: [...nodes.values()],
    edges,
    arrows: arrowsOf(edges),
    loose,
    total: { nodes: total.size, edges: edgeTotal },
    cut: nodes.size < total.size || dropped > 0 || edges.length < edgeTotal,
  };
}

/** A string cut to `width` characters, with an ellipsis. */
export function truncate(value, width) {
  const chars = [...value];
  return chars.length > width ? `${chars.slice(0, width - 1).join('')}…` : value;
}

/** Text in at most `lines` lines of `width` characters, broken at spaces where it can. */
export function wrap(value, width, lines) {
  const out = [];
  let rest = value.replace(/\s+/g, ' ').trim();
  while (rest && out.length < lines) {
    const chars = [...rest];
    if (chars.length <= width) {
      out.push(rest);
      rest = '';
      break;
    }
    const head = chars.slice(0, width).join('');
    const space = head.lastIndexOf(' ');
    const cut = space > width / 2 ? space : head.length;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut).trim();
  }
  if (rest && out.length) out[out.length - 1] = truncate(`${out[out.length - 1]} ${rest}`, width);
  return out;
}
