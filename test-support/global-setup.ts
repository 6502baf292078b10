// Runs once before every jest run: says, once, which tests will skip for want of a server, and how
// to run them (each test file skips quietly).

const SERVICES = [
  ['TOOLGATE_POSTGRES_URL', 'PostgreSQL', 'postgres'],
  ['TOOLGATE_REDIS_URL', 'Redis', 'redis'],
  ['TOOLGATE_PROMETHEUS_URL', 'Prometheus', 'prometheus'],
] as const;

export default function globalSetup(): void {
  for (const [variable, server, script] of SERVICES) {
    if (process.env[variable]) continue;
    process.stderr.write(
      `${variable} is not set, so the tests that need a ${server} server are skipped. ` +
        `Run them with a throwaway server: bash .ci/services/${script}.sh -- npx jest\n`,
    );
  }
}
