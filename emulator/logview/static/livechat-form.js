// A form made from a JSON Schema (draft-07, its definitions already resolved by botemu: see
// emulator/service/livechat_skill.py), for the value of an activity a skill manifest declares.
// Objects become fieldsets, strings text fields (an enum a list, a date a date field), numbers
// number fields, booleans checkboxes; anything else (arrays, anyOf, a recursive part) is edited
// as JSON. read() gives the value, or throws an Error that names the field.

import { h } from './dom.js';

let fields = 0; // ids for labels

const typeOf = (schema) => {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type) return type;
  if (schema.properties) return 'object';
  return undefined;
};

function labelled(name, path, schema, required, input) {
  fields += 1;
  input.id = `livechat-field-${fields}`;
  input.setAttribute('aria-label', path || name);
  return h('label', { class: 'livechat-field', for: input.id, title: typeof schema.description === 'string' ? schema.description : null },
    h('span', {}, `${name}${required ? ' *' : ''}`), input);
}

function jsonField(name, path, schema, value, required) {
  const input = h('textarea', { rows: 3, spellcheck: 'false', class: 'livechat-json' });
  input.value = value === undefined ? '' : JSON.stringify(value, null, 2);
  return {
    el: labelled(`${name} (JSON)`, path, schema, required, input),
    read() {
      const raw = input.value.trim();
      if (!raw) return undefined;
      try {
        return JSON.parse(raw);
      } catch (e) {
        throw new Error(`${path} is not JSON: ${e.message}`);
      }
    },
  };
}

function enumField(name, path, schema, value, required) {
  const options = schema.enum.map((v, i) => h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v)));
  const input = h('select', {}, required ? null : h('option', { value: '' }, '—'), options);
  const at = schema.enum.findIndex((v) => JSON.stringify(v) === JSON.stringify(value));
  input.value = at >= 0 ? String(at) : (required ? '0' : '');
  return { el: labelled(name, path, schema, required, input), read: () => (input.value === '' ? undefined : schema.enum[Number(input.value)]) };
}

function scalarField(name, path, schema, value, required, type) {
  if (type === 'boolean') {
    const input = h('input', { type: 'checkbox' });
    input.checked = value === true;
    return { el: labelled(name, path, schema, required, input), read: () => input.checked };
  }
  const number = type === 'integer' || type === 'number';
  const kind = number ? 'number' : schema.format === 'date' ? 'date' : schema.format === 'email' ? 'email' : 'text';
  const input = h('input', {
    type: kind,
    step: type === 'integer' ? '1' : number ? 'any' : null,
    min: number ? schema.minimum : null,
    max: number ? schema.maximum : null,
    maxlength: !number ? schema.maxLength : null,
    placeholder: typeof schema.pattern === 'string' ? schema.pattern : schema.format ?? null,
  });
  input.value = value === undefined || value === null ? '' : String(value);
  return {
    el: labelled(name, path, schema, required, input),
    read() {
      const raw = input.value;
      if (raw === '') return required && !number ? '' : undefined;
      if (!number) return raw;
      const parsed = Number(raw);
      if (!Number.isFinite(parsed) || (type === 'integer' && !Number.isInteger(parsed))) {
        throw new Error(`${path} is ${type === 'integer' ? 'a whole number' : 'a number'}`);
      }
      return parsed;
    },
  };
}

function objectField(name, path, schema, value, required, depth) {
  const own = value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const wanted = new Set(Array.isArray(schema.required) ? schema.required : []);
  const children = Object.entries(schema.properties).map(([key, child]) => [key,
    build(key, path ? `${path}.${key}` : key, child, own[key], wanted.has(key), depth + 1)]);
  const el = h('fieldset', { class: 'livechat-object' },
    h('legend', {}, `${name}${required ? ' *' : ''}`), children.map(([, field]) => field.el));
  return {
    el,
    read() {
      const out = {};
      for (const [key, field] of children) {
        const v = field.read();
        if (v !== undefined) out[key] = v;
      }
      return out;
    },
  };
}

/** One field for `schema` at `path` (its value to start with: `value`). */
export function build(name, path, schema, value, required = false, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 12 || schema['x-recursive'] !== undefined
      || schema.anyOf || schema.oneOf || schema.not) {
    return jsonField(name, path, schema ?? {}, value, required);
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return enumField(name, path, schema, value, required);
  const type = typeOf(schema);
  if (type === 'object' && schema.properties && typeof schema.properties === 'object') {
    return objectField(name, path, schema, value, required, depth);
  }
  if (['string', 'integer', 'number', 'boolean'].includes(type)) return scalarField(name, path, schema, value, required, type);
  return jsonField(name, path, schema, value, required);
}

/** The value form of a declared activity: {el, read()}. */
export function schemaForm(schema, value) {
  const form = build('value', '', schema, value, true);
  return { el: h('div', { class: 'livechat-schema-form', id: 'livechat-schema-form' }, form.el), read: () => form.read() };
}
