// tony-guard: the process that ends a task's command when its executor dies.
//
// tony-executor starts it in the command's process group with the read end of
// a pipe on fd 3 whose write end only the executor holds, and with every
// signal but SIGKILL blocked. When the executor exits or is killed, the pipe
// reads end-of-file and tony-guard kills its whole group, the command and
// whatever it started. It is linked statically and uses nothing but a few
// system calls, so it costs a task well under a megabyte (doc/architecture.md,
// "process cleanup"); without it the executor falls back to /bin/sh.

#include <signal.h>
#include <unistd.h>

#include <cerrno>

int main() {
  char buf[16];
  for (;;) {
    auto n = ::read(3, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EINTR))
      break;
  }
  ::kill(0, SIGKILL);
  return 0;
}
