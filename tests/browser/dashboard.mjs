// Drives headless Chromium (Debian's /usr/bin/chromium through playwright-core) against a
// running `aiscale run`: the overview shows the API's values, reads without JavaScript, updates
// without a reload; a workload page has non-empty charts and the decision log; a pause sent
// with the token changes the state and the next decisions say so; no console errors and no
// request leaves the aiscale server. A screenshot of each page is written to ARTIFACTS.
// Usage: node dashboard.mjs BASE_URL TOKEN_FILE WORKLOAD_TO_PAUSE ARTIFACTS_DIR PROFILE_DIR
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const [base, tokenFile, target, artifacts, profile] = process.argv.slice(2);
const token = readFileSync(tokenFile, 'utf8').trim();
let passed = 0;
let failed = 0;
function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok: ${name}`);
  } else {
    failed++;
    console.log(`not ok: ${name}${detail ? ': ' + detail : ''}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'],
  viewport: { width: 1400, height: 900 },
});
const problems = [];
const foreign = [];
function watch(page) {
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith(base)) foreign.push(r.url()); });
}

async function api(path) {
  const r = await context.request.get(base + path);
  return r.json();
}

// The overview's numbers for every workload, as {key: {desired, current, ready, min, max}}.
async function overviewNumbers(page) {
  return page.$$eval('tr[data-workload]', (rows) => Object.fromEntries(rows.map((tr) => {
    const cell = (f) => tr.querySelector(`td[data-field="${f}"]`).textContent.trim();
    return [tr.getAttribute('data-workload'), {
      desired: +cell('desired'), current: +cell('current'), ready: +cell('ready'),
      min: +cell('min'), max: +cell('max'), state: cell('state'),
    }];
  })));
}

function sameAsApi(shown, list) {
  for (const w of list.workloads) {
    const s = shown[w.key];
    if (!s || s.desired !== w.desired || s.current !== w.current || s.ready !== w.ready ||
        s.min !== w.min_replicas || s.max !== w.max_replicas) {
      return `${w.key}: page ${JSON.stringify(s)} vs API desired ${w.desired} current ${w.current} ready ${w.ready} min ${w.min_replicas} max ${w.max_replicas}`;
    }
  }
  return Object.keys(shown).length === list.workloads.length ? '' : 'row count differs';
}

try {
  const page = await context.newPage();
  watch(page);
  // 1. The overview equals the API (read the API, then the page; a tick between them is
  //    possible, so up to 5 tries).
  let diff = 'never compared';
  for (let i = 0; i < 5 && diff; i++) {
    const list = await api('/api/v1/workloads');
    await page.goto(base + '/', { waitUntil: 'load' });
    diff = sameAsApi(await overviewNumbers(page), list);
    if (diff) await sleep(700);
  }
  check('the overview lists every workload with the values the API returns', !diff, diff);
  const charset = await page.$eval('meta[charset]', (m) => m.getAttribute('charset'));
  check('the page declares <meta charset="utf-8">', charset === 'utf-8', charset);
  const sparks = await page.$$eval('td[data-field="replicas"] svg.spark path', (p) => p.length);
  check('each row has a replica sparkline', sparks >= 2, `${sparks} paths`);
  await page.screenshot({ path: `${artifacts}/overview.png`, fullPage: true });

  // 2. Readable with JavaScript off: the same rows, rendered by the server.
  const nojs = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run'] });
  const nojsContext = await nojs.newContext({ javaScriptEnabled: false });
  const plain = await nojsContext.newPage();
  await plain.goto(base + '/');
  const rowsNoJs = await plain.$$eval('tr[data-workload]', (r) => r.length);
  check('the overview table is there with JavaScript off', rowsNoJs >= 2, `${rowsNoJs} rows`);
  await nojs.close();

  // 3. The workload page: non-empty charts and the decision log.
  const key = (await api('/api/v1/workloads')).workloads.find((w) => w.name === target).key;
  const wpage = await context.newPage();
  watch(wpage);
  await wpage.goto(`${base}/workloads/${encodeURIComponent(key)}?hours=1`, { waitUntil: 'load' });
  const series = await wpage.$$eval('figure.chart path.series', (ps) =>
    ps.map((p) => ({ cls: p.getAttribute('class'), n: +p.getAttribute('data-points'), d: p.getAttribute('d') })));
  const desired = series.find((s) => s.cls.includes('desired'));
  check('the replica chart draws desired over time', desired && desired.n > 0 && desired.d.length > 5,
        JSON.stringify(desired));
  check('every chart series is drawn', series.length >= 3 && series.every((s) => s.d.length > 0),
        JSON.stringify(series.map((s) => s.cls)));
  const logRows = await wpage.$$eval('#log tbody tr', (r) => r.length);
  check('the decision log is shown', logRows >= 1, `${logRows} rows`);
  await wpage.screenshot({ path: `${artifacts}/workload.png`, fullPage: true });

  // 4. Pause with the token; the open overview updates itself (no reload) and decisions say so.
  const denied = await context.request.post(`${base}/api/v1/workloads/${encodeURIComponent(key)}/pause`);
  check('a pause without the token is refused (401)', denied.status() === 401, `${denied.status()}`);
  const t0 = Date.now() / 1000;
  const paused = await context.request.post(`${base}/api/v1/workloads/${encodeURIComponent(key)}/pause`,
    { headers: { Authorization: `Bearer ${token}` }, data: { direction: 'both' } });
  check('a pause with the token is accepted', paused.status() === 200, await paused.text());
  let state = '';
  for (let i = 0; i < 30 && !state.includes('paused'); i++) {
    await sleep(500);
    state = (await overviewNumbers(page))[key]?.state || '';
  }
  check('the open overview shows the pause without a reload', state.includes('paused'), state);
  let said = 0;
  for (let i = 0; i < 30 && said === 0; i++) {
    const ds = (await api(`/api/v1/workloads/${encodeURIComponent(key)}/decisions?limit=20`)).decisions;
    said = ds.filter((d) => d.wall_s > t0 && d.rule !== 'steering' &&
                            d.constrain_reason.includes('paused by API')).length;
    if (!said) await sleep(500);
  }
  check('the next decisions say "paused by API"', said > 0);
  await wpage.reload({ waitUntil: 'load' });
  const logText = await wpage.$eval('#log', (t) => t.textContent);
  check('the workload page shows the pause in its log', logText.includes('paused by API'));
  await page.screenshot({ path: `${artifacts}/overview-paused.png`, fullPage: true });
  await wpage.screenshot({ path: `${artifacts}/workload-paused.png`, fullPage: true });
  const resumed = await context.request.post(`${base}/api/v1/workloads/${encodeURIComponent(key)}/resume`,
    { headers: { Authorization: `Bearer ${token}` } });
  check('resume with the token is accepted', resumed.status() === 200);

  check('no console errors', problems.length === 0, problems.join(' | '));
  check('no request left the aiscale server', foreign.length === 0, foreign.join(' '));
} catch (e) {
  check('the browser run finished', false, String(e && e.stack || e));
} finally {
  await context.close();
}
console.log(`dashboard_browser: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
