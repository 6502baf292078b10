import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
const require = createRequire(process.cwd() + '/package.json');
const which = process.argv[2];
const pj = require.resolve(`@modelcontextprotocol/${which}/package.json`);
const bin = Object.values(JSON.parse(readFileSync(pj)).bin)[0];
const t = new StdioClientTransport({ command: process.execPath, args: [join(dirname(pj), bin), ...process.argv.slice(3)], stderr: 'pipe' });
const c = new Client({ name: 'probe', version: '1' });
await c.connect(t);
console.log(JSON.stringify(c.getServerVersion()), JSON.stringify(c.getServerCapabilities()));
const tools = await c.listTools();
for (const t of tools.tools) console.log(JSON.stringify(t).slice(0, 400));
try { const r = await c.listResources(); console.log('resources', r.resources.length, JSON.stringify(r.resources.slice(0,2)), r.nextCursor); } catch (e) { console.log('res err', e.message); }
try { const r = await c.listResourceTemplates(); console.log('templates', JSON.stringify(r)); } catch (e) { console.log('tmpl err', e.message); }
try { const r = await c.listPrompts(); console.log('prompts', JSON.stringify(r)); } catch (e) { console.log('prompts err', e.message); }
await c.close();
