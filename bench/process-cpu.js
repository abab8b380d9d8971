// Helpers of the CPU-per-operation scripts (bench/usage-cpu.js, bench/check-cpu.js): a free port to
// start a server on, and a process's CPU time read from Linux /proc.
const fs = require('node:fs');
const net = require('node:net');

/** A TCP port free on 127.0.0.1 now (another process may still take it before the server binds it). */
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** utime + stime of a process, in seconds (Linux /proc). */
function cpuOf(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

module.exports = { freePort, cpuOf };
