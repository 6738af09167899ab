// A conversation as a chat transcript: the activities it carried both ways, in order, as
// bubbles (messages) or one-line notes (every other activity), with the raw JSON a click away.
// Findings (the auth probe's, for one) sit where they were made.

import { clock, fill, h, toggler } from './dom.js';
import { findingCard } from './finding.js';

/** detail: the API's answer for a conversation ({call, events, activities, rules}). */
export function renderChat(root, detail, open = new Set()) {
  const items = [
    ...detail.activities.map((carried) => ({ seq: carried.seq, carried })),
    ...detail.events.filter((e) => e.kind === 'finding').map((event) => ({ seq: event.seq, event })),
  ].sort((a, b) => a.seq - b.seq);
  if (items.length === 0) {
    fill(root, h('p', { class: 'muted empty-chat' }, 'No activities yet.'));
    return;
  }
  fill(root, items.map((item) => (item.carried
    ? activity(item.carried, open)
    : h('div', { class: 'chat-finding', 'data-seq': item.seq }, findingCard(item.event.payload, detail.rules)))));
}

/** The seqs of the messages whose JSON is shown, to keep them open across a refresh. */
export function openRaw(root) {
  return new Set([...root.querySelectorAll('[data-seq] > pre.raw-json:not([hidden])')]
    .map((pre) => Number(pre.parentElement.dataset.seq)));
}

function activity(carried, open) {
  const a = carried.activity;
  const side = carried.direction === 'bot' ? 'bot' : 'user';
  const raw = h('pre', { class: 'raw-json', hidden: true });
  const button = h('button', { type: 'button', class: 'raw', title: 'the activity as JSON' }, 'JSON');
  toggler(button, raw, { onFirstOpen: () => { raw.textContent = JSON.stringify(a, null, 2); } });
  if (open.has(carried.seq)) button.click();
  const status = carried.status !== null && (carried.status < 200 || carried.status >= 300)
    ? h('span', { class: 'refused-by' }, `refused: HTTP ${carried.status}`)
    : null;
  const meta = h('div', { class: 'meta' }, h('span', { class: 'who' }, who(a, side)), when(a), status, button);
  if (a.type === 'message') {
    return h(
      'div',
      { class: `message ${side}${status ? ' refused' : ''}`, 'data-seq': carried.seq, 'data-type': a.type },
      h('div', { class: 'bubble' },
        h('div', { class: 'text' }, typeof a.text === 'string' ? a.text : ''),
        extras(a)),
      meta,
      raw,
    );
  }
  return h(
    'div',
    { class: `activity-note ${side}`, 'data-seq': carried.seq, 'data-type': String(a.type) },
    h('div', { class: 'note-line' }, h('span', { class: 'type' }, String(a.type)), ' ', describe(a)),
    meta,
    raw,
  );
}

function who(a, side) {
  const from = a.from && typeof a.from === 'object' ? a.from : {};
  return String(from.name ?? from.id ?? side);
}

function when(a) {
  if (typeof a.timestamp !== 'string') return null;
  const date = new Date(a.timestamp);
  if (Number.isNaN(date.getTime())) return h('span', { class: 'when' }, a.timestamp);
  return h('span', { class: 'when', title: a.timestamp }, clock(date.getTime() / 1000));
}

/** Attachments, suggested actions: what a message carries besides its text, as text. */
function extras(a) {
  const out = [];
  if (Array.isArray(a.attachments) && a.attachments.length) {
    out.push(h('ul', { class: 'attachments' }, a.attachments.map((x) => h('li', {},
      `${x?.contentType ?? 'attachment'}${x?.name ? `: ${x.name}` : ''}`))));
  }
  const actions = a.suggestedActions?.actions;
  if (Array.isArray(actions) && actions.length) {
    out.push(h('div', { class: 'suggested' }, actions.map((x) => h('span', { class: 'action' }, String(x?.title ?? x?.value ?? '?')))));
  }
  return out;
}

function describe(a) {
  const names = (list) => (Array.isArray(list) ? list.map((m) => m?.name ?? m?.id ?? '?').join(', ') : '');
  switch (a.type) {
    case 'conversationUpdate': {
      const parts = [];
      if (a.membersAdded?.length) parts.push(`added ${names(a.membersAdded)}`);
      if (a.membersRemoved?.length) parts.push(`removed ${names(a.membersRemoved)}`);
      return parts.join('; ');
    }
    case 'typing':
      return '…';
    case 'event':
    case 'invoke':
      return String(a.name ?? '');
    default:
      return typeof a.text === 'string' ? a.text : '';
  }
}
