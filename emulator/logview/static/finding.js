// A finding, shown where it happened: severity, rule, message, JSON path, source, and the rule's doc.

import { urls } from './api.js';
import { h } from './dom.js';

/** The rules page, scrolled to the rule (a text fragment: "-" must be escaped in one). */
export function ruleDoc(rule) {
  if (!rule) return urls.rules;
  const text = encodeURIComponent(`\`${rule}\``).replaceAll('-', '%2D');
  return `${urls.rules}#:~:text=${text}`;
}

/** p: a finding event's payload; rules: rule id -> {severity, source, summary} (from the API). */
export function findingCard(p, rules) {
  const rule = rules?.[p.rule];
  const severity = typeof p.severity === 'string' ? p.severity : rule?.severity ?? 'info';
  return h(
    'div',
    { class: `finding sev-${severity}` },
    h(
      'div',
      { class: 'finding-head' },
      h('span', { class: 'severity' }, severity),
      h('code', { class: 'rule' }, p.rule ?? '?'),
      h('span', { class: 'message' }, p.message ?? p.summary ?? ''),
    ),
    h(
      'div',
      { class: 'finding-meta' },
      h('span', { class: 'what' }, 'at'),
      h('code', { class: 'where' }, p.where ?? '–'),
      h('span', { class: 'what' }, 'source'),
      h('span', { class: 'source' }, rule?.source ?? p.source ?? 'not a registered rule'),
      h('a', { class: 'rule-doc', href: ruleDoc(p.rule), target: '_blank', rel: 'noopener', title: rule?.summary ?? 'every rule botemu checks' }, 'docs/rules.md'),
    ),
    p.evidence !== undefined && p.evidence !== null
      ? h('pre', { class: 'evidence' }, typeof p.evidence === 'string' ? p.evidence : JSON.stringify(p.evidence))
      : null,
  );
}
