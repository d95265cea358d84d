/* line_writer BYTES: writes BYTES/60 numbered 60-byte lines to stdout.
 *
 * Line N (from 0) of worker R (the RANK environment variable, or 0):
 *   "w<R> <N as 10 digits> <payload>\n", padded to 60 bytes with a fixed
 *   payload, so a checker can tell whole lines, their worker and their order.
 * Output goes through stdio with a 64 KiB fully-buffered buffer: the kernel
 * sees 64 KiB writes, as from a program that logs a lot. Part of bench/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 60

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: RANK=R line_writer BYTES\n");
    return 2;
  }
  unsigned long long bytes = strtoull(argv[1], NULL, 10);
  const char *rank_text = getenv("RANK");
  int rank = rank_text ? atoi(rank_text) : 0;
  static char buffer[64 * 1024];
  setvbuf(stdout, buffer, _IOFBF, sizeof buffer);

  char line[LINE + 1];
  int head = snprintf(line, sizeof line, "w%d ", rank);
  int digits = head; /* the 10 digits start here */
  memset(line + head, '0', 10);
  line[head + 10] = ' ';
  static const char fill[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  int payload = LINE - 1 - (head + 11);
  memcpy(line + head + 11, fill, (size_t)payload);
  line[LINE - 1] = '\n';

  unsigned long long count = bytes / LINE;
  for (unsigned long long n = 0; n < count; ++n) {
    if (fwrite(line, 1, LINE, stdout) != LINE) {
      perror("line_writer: write");
      return 1;
    }
    /* decimal increment of the 10-digit counter */
    for (int i = digits + 9; i >= digits; --i) {
      if (line[i] != '9') { ++line[i]; break; }
      line[i] = '0';
    }
  }
  if (fflush(stdout) != 0) {
    perror("line_writer: flush");
    return 1;
  }
  return 0;
}
