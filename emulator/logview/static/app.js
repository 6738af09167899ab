// botemu's log view: the router between the list, a call's page, the explorations and a call
// flow, and the live stream.

import { watch } from './api.js';
import { CallPage } from './callpage.js';
import { $ } from './dom.js';
import { ExplorationsPage } from './explorations.js';
import { FlowPage } from './flow.js';
import { ListPage } from './list.js';
import { LiveChatPage } from './livechat.js';
import { PhonePage } from './phone.js';

const listPage = $('#list-page');
const callPage = $('#call-page');
const explorationsPage = $('#explorations-page');
const flowPage = $('#flow-page');
const chatPage = $('#livechat-page');
const phonePage = $('#phone-page');
const tabs = $('#tabs');
const back = $('#back');
const list = new ListPage(listPage);
const call = new CallPage(callPage);
const explorations = new ExplorationsPage(explorationsPage);
const flow = new FlowPage(flowPage);
const livechat = new LiveChatPage(chatPage);
const phone = new PhonePage(phonePage);
const live = $('#live');
let previous = '#/';

function decoded(id) {
  try {
    return decodeURIComponent(id);
  } catch {
    return id; // keep it as it is
  }
}

function show(page) {
  for (const section of [listPage, callPage, explorationsPage, flowPage, chatPage, phonePage]) section.hidden = section !== page;
  tabs.hidden = ![listPage, explorationsPage, chatPage, phonePage].includes(page);
  $('#tab-calls').toggleAttribute('aria-current', page === listPage);
  $('#tab-explorations').toggleAttribute('aria-current', page === explorationsPage);
  $('#tab-chat').toggleAttribute('aria-current', page === chatPage);
  $('#tab-phone').toggleAttribute('aria-current', page === phonePage);
  if (page !== listPage) list.close();
  if (page !== callPage) call.close();
  if (page !== explorationsPage) explorations.close();
  if (page !== flowPage) flow.close();
  if (page !== chatPage) livechat.close();
  if (page !== phonePage) phone.close();
}

function route() {
  const hash = location.hash || '#/';
  const callMatch = /^#\/calls\/(.+)$/.exec(hash);
  const flowMatch = /^#\/explorations\/(.+)$/.exec(hash);
  if (callMatch) {
    show(callPage);
    const fromFlow = previous.startsWith('#/explorations/');
    call.open(decoded(callMatch[1]), fromFlow ? previous : list.hash);
    back.textContent = fromFlow ? '← call flow' : '← all calls';
    window.scrollTo(0, 0);
  } else if (flowMatch) {
    show(flowPage);
    flow.open(decoded(flowMatch[1]));
  } else if (hash === '#/chat') {
    show(chatPage);
    livechat.open();
  } else if (hash === '#/phone' || hash.startsWith('#/phone?')) {
    show(phonePage);
    phone.open();
  } else if (hash === '#/explorations') {
    show(explorationsPage);
    explorations.open();
  } else {
    show(listPage);
    const query = hash.startsWith('#/?') ? hash.slice(3) : '';
    list.open(query);
  }
  if (!callMatch) previous = hash;
}

const STATES = {
  live: 'live',
  reconnecting: 'reconnecting…',
  off: 'not live',
};

watch({
  onChange(change) {
    list.changed(change);
    call.changed(change);
  },
  onState(state) {
    if (state === 'live' && live.dataset.state === 'reconnecting') {
      list.changed(); // back after a break: catch up on what happened meanwhile
      if (call.call) call.changed({ id: call.call.id });
    }
    live.dataset.state = state;
    live.textContent = STATES[state] ?? state;
    live.title = state === 'off'
      ? 'this store has no file to watch: reload to see new calls'
      : 'new calls and events appear as they happen';
  },
});

window.addEventListener('hashchange', route);
route();
