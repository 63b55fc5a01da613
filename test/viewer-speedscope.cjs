// SPDX-License-Identifier: MIT
// Loads a perfring chrome export into speedscope in headless Chromium (through
// puppeteer-core) and prints what the page shows, as JSON: the profile's name,
// and the sandwich view's table (every frame with its self and total time).
// Optionally saves a screenshot of the flame chart.
//
//   node viewer-speedscope.cjs MODULES_DIR PROFILE.json [SCREENSHOT.png]
//
// speedscope's own way to open a local file is used: the page loads
// index.html#localProfilePath=FILE.js, where FILE.js calls
// speedscope.loadFileFromBase64(name, base64) (what its CLI writes).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const [modules, profile, shot] = process.argv.slice(2);
const puppeteer = require(path.join(modules, 'puppeteer-core'));
const index = path.join(modules, 'speedscope', 'dist', 'release', 'index.html');
const step = (ms, what, p) =>
	Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`${what}: no answer in ${ms} ms`)), ms))]);

(async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perfring-viewer-'));
	const js = path.join(dir, 'profile.js');
	fs.writeFileSync(js, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(profile))}, ` +
		`${JSON.stringify(fs.readFileSync(profile).toString('base64'))});\n`);
	const browser = await step(60000, 'launching chromium', puppeteer.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		userDataDir: path.join(dir, 'user-data'),
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync',
			'--allow-file-access-from-files',
			// speedscope draws with WebGL: software rendering without a GPU.
			'--enable-unsafe-swiftshader', '--use-angle=swiftshader'],
	}));
	const out = {};
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on('pageerror', e => errors.push(String(e)));
		await page.setViewport({ width: 1000, height: 3000 });
		const url = 'file://' + index + '#localProfilePath=' + js;
		// The flame chart first (the screenshot), then the sandwich table.
		await step(60000, 'loading speedscope', page.goto(url + '&view=time-ordered', { waitUntil: 'load' }));
		await step(60000, 'the profile to show', page.waitForFunction(
			() => /pid \d+/.test(document.body.innerText), { polling: 200, timeout: 0 }));
		out.title = await page.evaluate(() => document.title);
		out.text = await page.evaluate(() => document.body.innerText.slice(0, 400));
		if (shot) {
			await page.setViewport({ width: 1000, height: 420 });
			await new Promise(r => setTimeout(r, 500));
			await step(30000, 'screenshot', page.screenshot({ path: shot }));
			await page.setViewport({ width: 1000, height: 3000 });
		}
		// The sandwich view, as a user gets there: its toolbar button.
		await page.evaluate(() => {
			const b = [...document.querySelectorAll('div')].find(d => d.children.length <= 1 &&
				/Sandwich$/.test(d.innerText.trim()));
			if (b)
				b.click();
		});
		await step(60000, 'the sandwich table', page.waitForFunction(
			() => /Symbol Name\n./.test(document.body.innerText), { polling: 200, timeout: 0 }));
		await new Promise(r => setTimeout(r, 300));
		// Rows as the page shows them: "TOTAL\n\tSELF\n\tNAME".
		const text = await page.evaluate(() => document.body.innerText);
		out.rows = [];
		for (const line of text.slice(text.indexOf('Symbol Name') + 12).split('\n')) {
			if (!line.startsWith('\t'))
				out.rows.push([line.trim()]);
			else if (out.rows.length)
				out.rows[out.rows.length - 1].push(line.trim());
		}
		out.rows = out.rows.filter(r => r.length === 3);
		out.errors = errors;
	} finally {
		await browser.close();
		fs.rmSync(dir, { recursive: true, force: true });
	}
	process.stdout.write(JSON.stringify(out) + '\n');
})().catch(e => {
	console.error(String(e && e.stack || e));
	process.exit(1);
});
