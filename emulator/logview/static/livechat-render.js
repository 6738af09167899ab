// The web chat's bubbles: each activity of the conversation as the person sees it. Everything
// from the bot is untrusted: it becomes text nodes and attribute values only (dom.js `h`).
//
// - Images are shown inline only from data:image/ URLs or from this page's own origin: the page's
//   policy (img-src 'self' data:, emulator/logview/routes.py) allows nothing else, and a remote
//   image would tell its server that the developer read the message. A remote image is a link.
// - Links are http(s) only (a javascript: URL stays text), open in a new tab without referrer.
// - Suggested actions and card buttons are buttons that send their value back (onAction).
// - A click on a bubble (or its JSON button) shows the activity as JSON.

import { clock, h, pretty, toggler } from './dom.js';

/** An inline image's address, when it may be shown: a data:image/ URL, or same-origin. */
export function safeImage(url) {
  if (typeof url !== 'string' || url.length === 0) return null;
  if (/^data:image\/[a-z0-9.+-]+[;,]/i.test(url)) return url;
  try {
    const parsed = new URL(url, location.href);
    return parsed.origin === location.origin && /^https?:$/.test(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/** A link's address, when it may be one: http or https. */
export function safeLink(url) {
  if (typeof url !== 'string') return null;
  try {
    const parsed = new URL(url, location.href);
    return /^https?:$/.test(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

const text = (value) => (typeof value === 'string' ? value : '');

function link(url, label) {
  const href = safeLink(url);
  return href
    ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, label)
    : h('span', { class: 'link-text' }, label);
}

/** One attachment: an image, a hero or thumbnail card, or a link (a name and type as text). */
function attachment(x, onAction) {
  if (!x || typeof x !== 'object') return h('li', {}, 'attachment');
  const type = text(x.contentType) || 'attachment';
  const name = text(x.name);
  if (type.startsWith('image/')) {
    const src = safeImage(x.contentUrl);
    if (src) return h('li', { class: 'image' }, h('img', { src, alt: name || type, loading: 'lazy' }));
    return h('li', {}, link(x.contentUrl, `${name || 'image'} (${type}, not loaded: not from this page's origin)`));
  }
  if (/card\.(hero|thumbnail)$/.test(type) && x.content && typeof x.content === 'object') {
    const c = x.content;
    const images = Array.isArray(c.images) ? c.images : [];
    return h('li', { class: 'card' },
      h('strong', {}, text(c.title)),
      c.subtitle ? h('div', { class: 'muted' }, text(c.subtitle)) : null,
      c.text ? h('div', {}, text(c.text)) : null,
      images.map((img) => (safeImage(img?.url) ? h('img', { src: safeImage(img.url), alt: text(img.alt) || 'card image' }) : null)),
      actions(c.buttons, onAction));
  }
  if (/card\.(oauth|signin)$/.test(type) && x.content && typeof x.content === 'object') {
    return signInCard(x.content, onAction);
  }
  const url = x.contentUrl ?? null;
  return h('li', {}, url ? link(url, `${name || 'file'} (${type})`) : `${type}${name ? `: ${name}` : ''}`);
}

/** An OAuth or sign-in card: its text and a sign-in button. A button with a link opens it
 * (botemu's sign-in page); one without (outside Teams a card may carry none) asks botemu for
 * the link of the card's connection, as a channel fetches it itself (docs/oauth.md). */
function signInCard(c, onAction) {
  const buttons = Array.isArray(c.buttons) ? c.buttons : [];
  const first = buttons[0] ?? {};
  const title = text(first.title) || 'Sign in';
  const href = safeLink(first.value);
  const button = href
    ? h('a', { href, target: '_blank', rel: 'noopener', class: 'signin-link' }, title)
    : h('button', {
      type: 'button',
      class: 'action signin-link',
      'aria-label': `${title} (sign in)`,
      onclick: (event) => {
        event.stopPropagation();
        onAction({ type: 'signin', connectionName: text(c.connectionName) });
      },
    }, title);
  return h('li', { class: 'card signin-card' }, c.text ? h('div', {}, text(c.text)) : null, button);
}

/** Buttons for suggested actions or card buttons: each sends its value (openUrl is a link). */
export function actions(list, onAction) {
  if (!Array.isArray(list) || list.length === 0) return null;
  return h('div', { class: 'suggested' }, list.map((action) => {
    const title = String(action?.title ?? action?.value ?? '?');
    if (action?.type === 'openUrl') return link(action.value, title);
    return h('button', {
      type: 'button',
      class: 'action',
      'aria-label': `${title} (suggested action)`,
      onclick: (event) => {
        event.stopPropagation();
        onAction(action);
      },
    }, title);
  }));
}

/** What an activity that is not a message says, on one line. */
function describe(a) {
  const names = (list) => (Array.isArray(list) ? list.map((m) => m?.name ?? m?.id ?? '?').join(', ') : '');
  switch (a.type) {
    case 'conversationUpdate':
      return [a.membersAdded?.length ? `added ${names(a.membersAdded)}` : '',
        a.membersRemoved?.length ? `removed ${names(a.membersRemoved)}` : ''].filter(Boolean).join('; ');
    case 'event':
    case 'invoke':
      return text(a.name);
    case 'endOfConversation':
      return text(a.code);
    case 'messageReaction':
      return (a.reactionsAdded ?? []).map((r) => r?.type ?? '?').join(', ');
    default:
      return text(a.text);
  }
}

function when(a) {
  const date = new Date(a.timestamp);
  return Number.isNaN(date.getTime()) ? null : h('span', { class: 'when', title: a.timestamp }, clock(date.getTime() / 1000));
}

/**
 * The element of one activity (side: "user" or "bot"), with data-id for later updates, and
 * its JSON one click away. onAction(action): a suggested action was clicked.
 */
export function activityView(a, side, onAction) {
  const raw = h('pre', { class: 'raw-json', hidden: true });
  const button = h('button', { type: 'button', class: 'raw', 'aria-label': 'Show the activity as JSON' }, 'JSON');
  toggler(button, raw, { onFirstOpen: () => { raw.textContent = pretty(a); } });
  const from = a.from && typeof a.from === 'object' ? a.from : {};
  const meta = h('div', { class: 'meta' }, h('span', { class: 'who' }, String(from.name ?? from.id ?? side)), when(a), button);
  const props = { 'data-id': typeof a.id === 'string' ? a.id : null, 'data-type': String(a.type), 'data-from': side };
  let el;
  if (a.type === 'message') {
    const bubble = h('div', { class: 'bubble', title: 'click for the JSON' },
      h('div', { class: 'text' }, text(a.text)),
      Array.isArray(a.attachments) && a.attachments.length
        ? h('ul', { class: 'attachments' }, a.attachments.map((x) => attachment(x, onAction))) : null,
      actions(a.suggestedActions?.actions, onAction));
    bubble.addEventListener('click', (event) => {
      if (event.target.closest('a, button')) return;
      button.click();
    });
    el = h('div', { class: `message ${side}`, ...props }, bubble, meta, raw);
  } else {
    el = h('div', { class: `activity-note ${side}`, ...props },
      h('div', { class: 'note-line bubble-note', title: 'click for the JSON' }, h('span', { class: 'type' }, String(a.type)), ' ', describe(a)),
      meta, raw);
    el.firstChild.addEventListener('click', () => button.click());
  }
  return el;
}

/** The line under an activity that says how the bot answered it (an invoke's response too). */
export function answerView(answer) {
  const failed = answer.status === null || answer.status >= 300;
  const status = answer.status === null ? `not delivered: ${answer.failure ?? ''}` : `HTTP ${answer.status}`;
  const out = h('div', { class: `livechat-answer${failed ? ' refused-by' : ''}`, 'data-status': String(answer.status) },
    answer.type === 'invoke' ? `invoke response: ${status}` : `the bot answered ${status}`);
  if (answer.type === 'invoke' && answer.body !== null && answer.body !== undefined) {
    out.append(h('pre', { class: 'raw-json invoke-response' }, pretty(answer.body)));
  }
  return out;
}

/** Findings (rule, severity, where, message) as a list, the worst first; all text. */
export function findingsView(findings) {
  const order = { error: 0, warning: 1, info: 2 };
  const sorted = [...findings].sort((a, b) => (order[a.severity] ?? 3) - (order[b.severity] ?? 3));
  return h('ul', { class: 'livechat-findings' }, sorted.map((f) => h('li', { class: `sev-${String(f.severity)}`, 'data-rule': String(f.rule) },
    h('span', { class: 'severity' }, String(f.severity)), ' ',
    h('span', { class: 'rule' }, String(f.rule)), ' ',
    h('span', { class: 'where' }, String(f.where ?? '')), ': ',
    h('span', { class: 'message' }, String(f.message ?? '')))));
}
