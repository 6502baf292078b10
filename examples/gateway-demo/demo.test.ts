// The gateway demo, run as `pnpm gateway:demo` would: it prints its configuration, then every scene
// prints what the model read and the gateway's log line naming the gate that decided, within 80
// columns; `toolgate audit verify` ends it.

import { runDemo, wrap } from './demo';

describe('pnpm gateway:demo', () => {
  it('shows its configuration and each gate deciding, for two tenants, against the reference servers', async () => {
    const lines: string[] = [];
    await runDemo((line) => lines.push(line));
    expect(lines.filter((line) => line.length > 80)).toEqual([]);
    // Wrapped lines read as one for the checks below.
    const out = lines.join('\n').replace(/\n {2,}(?![│ ]|model reads|gateway log|inbox|audit log)/g, ' ');
    expect(out).toContain('toolgate.yaml:\n  │ listen: { host: 127.0.0.1, port: 0 }');
    expect(out).toContain('  │     tools: [mem_delete_*]');
    expect(out).toMatch(/^toolgate gateway listening on http:\/\/127\.0\.0\.1:\d+\/mcp$/m);
    expect(out).toContain(
      'acme sees 12 tools: ev_echo, ev_get-sum, fs_read_text_file, fs_write_file, fs_list_directory, mem_',
    );
    expect(out).toContain('globex sees 3 tools: fs_read_text_file, fs_write_file, fs_list_directory');
    expect(out).toContain('model reads: Echo: hello through the gateway');
    expect(out).toContain('gateway log: acme/support-bot ev_echo → ran');
    expect(out).toMatch(/model reads: .*Refund policy: up to 30 days after delivery\./);
    expect(out).toMatch(
      /model reads: \[result-ceiling refused: 'fs_read_text_file' returned [\d,]+ characters; the ceiling is 2,000\./,
    );
    expect(out).toContain(
      'gateway log: acme/support-bot fs_read_text_file → refused by result-ceiling (RESULT_TOO_LARGE)',
    );
    expect(out).toContain("model reads: [policy refused: policy rule 'memories-are-kept'");
    expect(out).toContain(
      'gateway log: acme/support-bot mem_delete_entities → refused by policy (POLICY_DENIED)',
    );
    expect(out).toContain("model reads: [check-in refused: 'fs_write_file' awaits a person's approval");
    expect(out).toContain(
      'gateway log: acme/support-bot fs_write_file → refused by check-in (CHECKIN_PENDING)',
    );
    expect(out).toContain('gateway log: acme/ana fs_write_file → ran after approval (elicitation)');
    // MCP 2026-07-28: an input-required answer, approved on the inbox page (URL) or in a form.
    expect(out).toMatch(/client opens: http:\/\/127\.0\.0\.1:\d+\/inbox\/check-ins\/<id>/);
    expect(out).toMatch(/client opens: [^\n]*\n {2}model reads: Successfully wrote to [^\n]*url\.txt/);
    expect(out).toContain("client shows a form: Allow 'fs_write_file' (from MCP server 'fs') to run with");
    expect(out).toMatch(/model reads: Successfully wrote to [^\n]*form\.txt/);
    expect(out).toContain('gateway log: acme/support-bot fs_write_file → input-required');
    expect(out).toContain('gateway log: acme/support-bot fs_write_file → ran after approval (elicitation)');
    expect(out).toContain('gateway log: acme/support-bot fs_write_file → ran after approval (inbox)');
    expect(out).toContain('gateway log: acme/support-bot fs_write_file → ran after approval (grant)');
    expect(out).toContain(
      'gateway log: acme/support-bot fs_write_file → ran after approval (standing-grant)',
    );
    expect(out.match(/→ ran after approval \(standing-grant\)/g)).toHaveLength(1);
    expect(out).toContain("model reads: [dispatch refused: there is no tool named 'mem_read_graph'");
    expect(out).toMatch(/globex\/intern fs_list_directory → refused by limits \(/);
    expect(out).toContain('gateway log: acme/support-bot crm_lookup → ran');
    expect(out).toContain(
      'gateway log: acme/support-bot crm_lookup → refused by mcp (TOOL_DEFINITION_CHANGED)',
    );
    // The changed tool waits in the inbox with its diff; accepted there, it runs again.
    expect(out).toContain(
      "ana (an operator) opens the review in the inbox: Accept the changed definition of 'crm_lookup'",
    );
    expect(out).toContain('inbox page: the definition diff, with the new description');
    expect(out).toMatch(
      /looks the customer up once more \(the change was accepted\)\n {2}model reads: customer c-42/,
    );
    expect(out).toMatch(
      /HTTP 401, WWW-Authenticate: Bearer error="invalid_token", resource_metadata="http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(out).toContain(
      '/readyz: ready=true; everything connected, fs connected, memory connected, crm connected',
    );
    expect(out).toMatch(
      /\$ toolgate audit verify --config toolgate\.yaml\n {2}audit log ok: \d+ record\(s\), hash chain and signatures hold/,
    );
  }, 120_000);

  it('wraps a long line at spaces, continuations indented', () => {
    expect(wrap('  one two three four', 12)).toEqual(['  one two', '    three', '    four']);
    expect(wrap('x'.repeat(10), 4)).toEqual(['xxxx', '  xx', '  xx', '  xx']);
    expect(wrap('short', 80)).toEqual(['short']);
  });
});
