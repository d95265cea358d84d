/* check_lines: verifies the output of line_writer.
 *
 *   check_lines --prefixed WORKERS LINES FILE
 *       FILE is dlaunch's console: every line must be "[rankR]:" followed by a
 *       whole line of worker R (0 <= R < WORKERS); per worker the numbers must
 *       run 0, 1, 2, ... and reach LINES.
 *   check_lines --rank R LINES FILE
 *       FILE holds worker R's lines alone, unprefixed (a direct run's file or
 *       a --log-dir stdout.log), complete and in order.
 *
 * Prints "ok: ..." and exits 0, or prints the first problem and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 60
#define MAX_WORKERS 64

static unsigned long long next_seq[MAX_WORKERS];

/* Checks one worker line (without prefix, without '\n'); returns NULL or why. */
static const char *check_body(const char *s, size_t n, int rank) {
  char head[16];
  int h = snprintf(head, sizeof head, "w%d ", rank);
  if (n != LINE - 1) return "wrong line length";
  if (memcmp(s, head, (size_t)h) != 0) return "line does not start with its worker's tag";
  unsigned long long seq = 0;
  for (int i = h; i < h + 10; ++i) {
    if (s[i] < '0' || s[i] > '9') return "bad line number";
    seq = seq * 10 + (unsigned long long)(s[i] - '0');
  }
  if (s[h + 10] != ' ') return "bad separator";
  static const char fill[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  if (memcmp(s + h + 11, fill, (size_t)(LINE - 1 - (h + 11))) != 0) return "payload damaged";
  if (seq != next_seq[rank]) return "line number out of order (lost, repeated or reordered)";
  ++next_seq[rank];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5 || (strcmp(argv[1], "--prefixed") != 0 && strcmp(argv[1], "--rank") != 0)) {
    fprintf(stderr, "usage: check_lines --prefixed WORKERS LINES FILE | --rank R LINES FILE\n");
    return 2;
  }
  int prefixed = strcmp(argv[1], "--prefixed") == 0;
  int number = atoi(argv[2]);
  unsigned long long expected = strtoull(argv[3], NULL, 10);
  int workers = prefixed ? number : number + 1;
  if (number < 0 || workers > MAX_WORKERS) { fprintf(stderr, "check_lines: bad worker count\n"); return 2; }
  FILE *in = fopen(argv[4], "rb");
  if (!in) { perror(argv[4]); return 1; }

  size_t capacity = 8u << 20, held = 0;
  char *buffer = malloc(capacity);
  unsigned long long line_no = 0;
  const char *problem = NULL;
  char shown[160] = "";
  for (;;) {
    size_t got = fread(buffer + held, 1, capacity - held, in);
    held += got;
    size_t start = 0;
    for (;;) {
      char *newline = memchr(buffer + start, '\n', held - start);
      if (!newline) break;
      size_t n = (size_t)(newline - (buffer + start));
      const char *s = buffer + start;
      ++line_no;
      int rank = number;
      if (prefixed) {
        if (n < 8 || memcmp(s, "[rank", 5) != 0) { problem = "no [rankN]: prefix"; }
        else {
          const char *p = s + 5;
          rank = 0;
          while (p < s + n && *p >= '0' && *p <= '9') rank = rank * 10 + (*p++ - '0');
          if (p == s + 5 || p + 2 > s + n || p[0] != ']' || p[1] != ':') problem = "malformed prefix";
          else if (rank >= workers) problem = "rank out of range";
          else { n -= (size_t)(p + 2 - s); s = p + 2; }
        }
      }
      if (!problem) problem = check_body(s, n, rank);
      if (problem) {
        snprintf(shown, sizeof shown, "%.*s", (int)(newline - (buffer + start) < 120 ? newline - (buffer + start) : 120), buffer + start);
        break;
      }
      start += (size_t)(newline - (buffer + start)) + 1;
    }
    if (problem) break;
    memmove(buffer, buffer + start, held - start);
    held -= start;
    if (got == 0) break;
    if (held == capacity) { problem = "line too long"; break; }
  }
  fclose(in);
  if (!problem && held != 0) { problem = "last line has no newline"; ++line_no; }
  if (problem) {
    printf("FAIL: %s: line %llu: %s%s%s\n", argv[4], line_no, problem, *shown ? ": " : "", shown);
    return 1;
  }
  for (int r = prefixed ? 0 : number; r < workers; ++r) {
    if (next_seq[r] != expected) {
      printf("FAIL: %s: worker %d has %llu lines, expected %llu\n", argv[4], r, next_seq[r], expected);
      return 1;
    }
  }
  printf("ok: %s: %llu lines, %d worker(s) x %llu, whole and in order\n", argv[4], line_no,
         prefixed ? workers : 1, expected);
  return 0;
}
