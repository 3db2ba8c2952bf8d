// view_trace_headless.mjs -- open an anyp Chrome trace (--trace FILE) in the
// speedscope viewer inside headless Chromium and write a PNG screenshot.
//
// Used by scripts/view_trace_headless.sh, which installs speedscope and
// playwright-core side by side into a cache directory and passes
// --speedscope-dir; playwright-core is loaded from that same node_modules. Run
// that script rather than this file. Nothing is downloaded here: speedscope's static
// release (node_modules/speedscope/dist/release) is served from 127.0.0.1 and
// the system Chromium (/usr/bin/chromium) is driven by playwright-core.
//
// What speedscope can and cannot show (speedscope 1.25):
//  * one thread (track) at a time: every pid/tid with X/B/E events becomes one
//    "profile", sorted by pid then tid (thread_sort_index is ignored); the
//    thread_name metadata gives its name;
//  * it shifts each thread so that its first event starts at 0, so the tracks'
//    time axes do not line up (a dma track that starts at 0.3 us is drawn from
//    0). By default this script therefore views a temporary copy of the trace
//    with a zero-length slice named "(align)" at t=0 and at the makespan on
//    every thread that does not already reach them; --raw views the file as it is;
//  * flow events (ph s/f: anyp's "notify" and "transfer" arrows) are not drawn;
//  * a slice's label is its name followed by its args as JSON.
// To see several tracks, this script screenshots each selected thread and stacks
// the panels (same width, same time axis when aligned) into one PNG.
//
// Usage: node view_trace_headless.mjs --trace T.json --out OUT.png
//          [--threads "rank 0,rank 0 dma 0"] [--view time-ordered|left-heavy|sandwich]
//            (default threads: the first one and up to three "<first> dma N")
//          [--width 1400] [--height 800] [--raw] [--chromium /usr/bin/chromium]
//          --speedscope-dir DIR   (the speedscope package directory)
// Exit status: 0 on success; 1 on a usage error, a missing thread, an error
// shown by speedscope or a page error; 2 when the PNG was written but
// speedscope's importer warned (e.g. "Tried to end X when Y was on the top of
// the stack": two slices of one track overlap, if only by a rounding error, so
// speedscope nests one inside the other); the warnings are printed on stderr.

import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'

function die(msg) {
  console.error(`view_trace_headless: ${msg}`)
  process.exit(1)
}

function parseArgs(argv) {
  const opts = {
    threads: null, view: 'time-ordered', width: 1400, height: 800, raw: false,
    chromium: '/usr/bin/chromium', speedscopeDir: null, trace: null, out: null,
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const next = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value`)
      return argv[++i]
    }
    if (a === '--trace') opts.trace = next()
    else if (a === '--out') opts.out = next()
    else if (a === '--threads') opts.threads = next().split(',').map(s => s.trim()).filter(Boolean)
    else if (a === '--view') opts.view = next()
    else if (a === '--width') opts.width = Number(next())
    else if (a === '--height') opts.height = Number(next())
    else if (a === '--raw') opts.raw = true
    else if (a === '--chromium') opts.chromium = next()
    else if (a === '--speedscope-dir') opts.speedscopeDir = next()
    else die(`unknown argument ${a}`)
  }
  if (!opts.trace || !opts.out || !opts.speedscopeDir) die('need --trace, --out and --speedscope-dir')
  if (!['time-ordered', 'left-heavy', 'sandwich'].includes(opts.view)) die(`bad --view ${opts.view}`)
  return opts
}

// Threads as speedscope 1.25 lists them: those with B/E/X events, sorted by
// pid then tid, named by thread_name metadata.
function speedscopeThreads(events) {
  const names = new Map()
  for (const e of events) {
    if (e.ph === 'M' && e.name === 'thread_name' && e.args && e.args.name) names.set(`${e.pid}:${e.tid}`, e.args.name)
  }
  const seen = new Map()
  for (const e of events) {
    if (e.ph !== 'X' && e.ph !== 'B' && e.ph !== 'E') continue
    const key = `${e.pid}:${e.tid}`
    if (!seen.has(key)) seen.set(key, { pid: Number(e.pid), tid: Number(e.tid), name: names.get(key) ?? `pid ${e.pid}, tid ${e.tid}` })
  }
  return [...seen.values()].sort((a, b) => a.pid - b.pid || a.tid - b.tid)
}

// A copy with zero-length "(align)" slices at 0 and at the makespan, so every
// thread spans the same time range in speedscope.
function alignedCopy(doc, events) {
  let end = 0
  for (const e of events) if (e.ph === 'X') end = Math.max(end, e.ts + (e.dur ?? 0))
  const makespan = doc.otherData && typeof doc.otherData.makespan_us === 'number' ? Math.max(end, doc.otherData.makespan_us) : end
  const extra = []
  for (const t of speedscopeThreads(events)) {
    const own = events.filter(e => e.ph === 'X' && Number(e.pid) === t.pid && Number(e.tid) === t.tid)
    if (own.length === 0) continue
    const first = Math.min(...own.map(e => e.ts))
    const last = Math.max(...own.map(e => e.ts + (e.dur ?? 0)))
    if (first > 0) extra.push({ name: '(align)', ph: 'X', pid: t.pid, tid: t.tid, ts: 0, dur: 0 })
    if (last < makespan) extra.push({ name: '(align)', ph: 'X', pid: t.pid, tid: t.tid, ts: makespan, dur: 0 })
  }
  const copy = Array.isArray(doc) ? [...events, ...extra] : { ...doc, traceEvents: [...events, ...extra] }
  return { copy, makespan }
}

const MIME = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.png': 'image/png', '.ico': 'image/x-icon', '.wasm': 'application/wasm', '.woff2': 'font/woff2', '.txt': 'text/plain',
}

function serve(releaseDir, traceBody) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1')
    res.setHeader('Access-Control-Allow-Origin', '*')
    if (url.pathname === '/trace.json') {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(traceBody)
      return
    }
    const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname).replace(/^\/+/, '')
    const file = path.resolve(releaseDir, rel)
    if (!file.startsWith(path.resolve(releaseDir) + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404)
      res.end('not found')
      return
    }
    res.writeHead(200, { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream' })
    fs.createReadStream(file).pipe(res)
  })
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => resolve(server)))
}

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  if (!fs.existsSync(opts.chromium)) die(`${opts.chromium} not found; install it with: apt-get install chromium`)
  const releaseDir = path.join(opts.speedscopeDir, 'dist', 'release')
  if (!fs.existsSync(path.join(releaseDir, 'index.html'))) die(`no speedscope release at ${releaseDir}`)
  const require = createRequire(path.join(opts.speedscopeDir, '..', 'x.js'))
  const { chromium } = require('playwright-core')

  let doc
  try {
    doc = JSON.parse(fs.readFileSync(opts.trace, 'utf8'))
  } catch (err) {
    die(`cannot read ${opts.trace} as JSON: ${err.message}`)
  }
  const events = Array.isArray(doc) ? doc : doc.traceEvents
  if (!Array.isArray(events)) die(`${opts.trace} has no traceEvents array`)
  const threads = speedscopeThreads(events)
  if (threads.length === 0) die(`${opts.trace} has no X/B/E events: nothing for speedscope to show`)
  console.log(`speedscope profiles (in its order): ${threads.map((t, i) => `${i}:"${t.name}"`).join(' ')}`)
  // Default: the first thread and up to three of its DMA engine tracks
  // ("rank 0", "rank 0 dma 0", ...), stacked.
  const wanted = opts.threads ??
    [threads[0].name, ...threads.filter(t => t.name.startsWith(`${threads[0].name} dma `)).slice(0, 3).map(t => t.name)]
  const picks = wanted.map(name => {
    const index = threads.findIndex(t => t.name === name)
    if (index < 0) die(`no thread named "${name}" with slices in ${opts.trace}`)
    return { name, index }
  })

  let body = JSON.stringify(doc)
  if (!opts.raw) {
    const { copy, makespan } = alignedCopy(doc, events)
    body = JSON.stringify(copy)
    console.log(`aligned every thread to [0, ${makespan} us] with zero-length "(align)" slices (a copy; --raw to skip)`)
  }

  const server = await serve(releaseDir, body)
  const port = server.address().port
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anyp-trace-chromium-'))
  // Panels of equal height, each with a 2 px border below, fill --height.
  const panelHeight = picks.length === 1 ? opts.height : Math.floor(opts.height / picks.length) - 2
  let context
  const problems = []
  const importWarnings = [] // speedscope's importer warns about slices that do not nest
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: opts.chromium,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: opts.width, height: panelHeight },
      timeout: 60000,
    })
    const page = context.pages()[0] ?? await context.newPage()
    page.on('console', msg => {
      const t = msg.text()
      if (/GL Driver Message|GPU stall/.test(t)) return // headless software GL chatter
      if (/Failed to load resource/.test(t)) return // reported with its URL by the response handler
      if (msg.type() === 'error') problems.push(`console error: ${t}`)
      else if (msg.type() === 'warning') importWarnings.push(t)
    })
    page.on('pageerror', err => problems.push(`page error: ${err.message}`))
    page.on('response', r => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`) })
    page.on('dialog', async d => { problems.push(`dialog: ${d.message()}`); await d.dismiss() })

    // No &title=: speedscope would then give every profile that one name and
    // the toolbar could no longer tell the threads apart.
    const traceURL = `http://127.0.0.1:${port}/trace.json`
    await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=${encodeURIComponent(traceURL)}` +
      `&view=${opts.view}`, { waitUntil: 'load' })
    // Loaded when the toolbar names the profile (its "1/N" counter is shown).
    await page.waitForFunction(() => /\d+\s*\/\s*\d+/.test(document.body.innerText), null, { timeout: 30000 })
      .catch(() => problems.push('speedscope did not show a profile within 30 s'))
    const text = await page.evaluate(() => document.body.innerText)
    if (/Something went wrong|Unrecognized format|Failed to load/i.test(text)) problems.push(`speedscope says: ${text.slice(0, 300)}`)

    const shots = []
    let current = 0
    for (const pick of picks) {
      // Keys n / p step to the next / previous profile.
      while (current < pick.index) { await page.keyboard.press('n'); current++ }
      while (current > pick.index) { await page.keyboard.press('p'); current-- }
      await page.mouse.move(1, 1)
      await page.waitForTimeout(500)
      const shown = await page.evaluate(() => document.body.innerText)
      if (!shown.includes(pick.name)) problems.push(`after selecting profile ${pick.index}, the toolbar does not name "${pick.name}"`)
      shots.push({ name: pick.name, png: await page.screenshot({ fullPage: true }) })
      console.log(`captured profile ${pick.index + 1}/${threads.length} "${pick.name}"`)
    }

    if (shots.length === 1) {
      fs.writeFileSync(opts.out, shots[0].png)
    } else {
      // Stack the panels top to bottom into one page and screenshot it.
      const h = panelHeight
      const imgs = shots.map(s => `<img src="data:image/png;base64,${s.png.toString('base64')}" ` +
        `style="display:block;width:${opts.width}px;height:${h}px;border-bottom:2px solid #444">`).join('')
      await page.setViewportSize({ width: opts.width, height: h * shots.length + 2 * shots.length })
      await page.setContent(`<html><body style="margin:0;background:#fff">${imgs}</body></html>`)
      await page.waitForTimeout(200)
      fs.writeFileSync(opts.out, await page.screenshot({ fullPage: true }))
    }
    console.log(`wrote ${opts.out}`)
  } finally {
    if (context) await context.close()
    server.close()
    fs.rmSync(userDataDir, { recursive: true, force: true })
  }
  for (const w of importWarnings) console.error(`view_trace_headless: speedscope import warning: ${w}`)
  if (problems.length) {
    for (const p of problems) console.error(`view_trace_headless: ${p}`)
    process.exit(1)
  }
  if (importWarnings.length) {
    console.error(`view_trace_headless: ${importWarnings.length} import warning(s): the screenshot was written, ` +
      'but speedscope re-nested or closed some slices (see above)')
    process.exit(2)
  }
}

main().catch(err => die(err.stack || String(err)))
