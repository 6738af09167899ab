// botemu's log view: the router between the list and a call's page, and the live stream.

import { watch } from './api.js';
import { CallPage } from './callpage.js';
import { $ } from './dom.js';
import { ListPage } from './list.js';

const listPage = $('#list-page');
const callPage = $('#call-page');
const list = new ListPage(listPage);
const call = new CallPage(callPage);
const live = $('#live');

function route() {
  const hash = location.hash || '#/';
  const match = /^#\/calls\/(.+)$/.exec(hash);
  if (match) {
    list.close();
    listPage.hidden = true;
    callPage.hidden = false;
    let id = match[1];
    try {
      id = decodeURIComponent(id);
    } catch {
      // keep it as it is
    }
    call.open(id, list.hash);
    window.scrollTo(0, 0);
  } else {
    call.close();
    callPage.hidden = true;
    listPage.hidden = false;
    const query = hash.startsWith('#/?') ? hash.slice(3) : '';
    list.open(query);
  }
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
