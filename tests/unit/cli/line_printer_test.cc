// What dlaunch logs prints: whole lines as they are, and, when following,
// the start of a line whose newline has not come (a progress bar) drawn,
// continued, redrawn and ended as the launcher's console does.
#include "cli/line_printer.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <string>

#include "../test_support/temp_dir.h"

namespace dlaunch::cli {
namespace {

// What the printer writes, kept in memory.
class Output {
 public:
  Output() : file_(::open_memstream(&data_, &size_)) {}
  ~Output() {
    std::fclose(file_);
    std::free(data_);
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  std::FILE* file() { return file_; }
  // Everything written since the last call.
  std::string taken() {
    std::fflush(file_);
    std::string all(data_, size_);
    std::string fresh = all.substr(taken_);
    taken_ = all.size();
    return fresh;
  }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
  std::size_t taken_ = 0;
};

jobs::MergedLine line_of(int rank, std::string text, int stream = 1) {
  jobs::MergedLine line;
  line.rank = rank;
  line.stream = stream;
  line.text = std::move(text);
  return line;
}

struct Printer : ::testing::Test {
  Output out;
  LinePrinter printer{"", -1, out.file()};
  Printer() { printer.set_prefixed(true); }
};

TEST_F(Printer, WholeLinesAreAsBefore) {
  printer.print(line_of(0, "a"));
  printer.print(line_of(1, "b\r"));  // never drawn: its bytes as they are
  EXPECT_EQ(out.taken(), "[rank0]:a\n[rank1]:b\r\n");
  printer.set_prefixed(false);
  printer.print(line_of(3, "c"));
  EXPECT_EQ(out.taken(), "c\n");
}

TEST_F(Printer, ABarRedrawnIsRedrawnUnderItsPrefixThenEnded) {
  printer.show_partial(0, 1, "10%");
  printer.show_partial(0, 1, "10%\r20%");
  printer.show_partial(0, 1, "10%\r20%\r30%");
  printer.print(line_of(0, "10%\r20%\r30%\r100%"));
  EXPECT_EQ(out.taken(), "[rank0]:10%\r[rank0]:20%\r[rank0]:30%\r[rank0]:100%\n");
}

TEST_F(Printer, ARedrawingShorterThanTheOldBlanksWhatIsLeftCountingUtf8Characters) {
  printer.show_partial(0, 1, "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88 30%");  // "███ 30%": 7 columns, 13 bytes
  printer.show_partial(0, 1, "\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88 30%\rdone");
  EXPECT_EQ(out.taken(), "[rank0]:\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88 30%\r[rank0]:done   ");
}

TEST_F(Printer, ALineThatGrowsIsContinuedNotPrintedTwice) {
  printer.show_partial(0, 1, "Epoch 1: ");
  printer.show_partial(0, 1, "Epoch 1: loss");
  printer.show_partial(0, 1, "Epoch 1: loss");  // unchanged: nothing
  printer.print(line_of(0, "Epoch 1: loss 0.5"));
  EXPECT_EQ(out.taken(), "[rank0]:Epoch 1: loss 0.5\n");
  printer.print(line_of(0, "Epoch 2"));
  EXPECT_EQ(out.taken(), "[rank0]:Epoch 2\n") << "the drawn line is done: the next is a line of its own";
}

TEST_F(Printer, AnotherRanksLineEndsTheOpenDrawingFirst) {
  printer.show_partial(0, 1, "50%");
  printer.print(line_of(1, "hello"));
  EXPECT_EQ(out.taken(), "[rank0]:50%\n[rank1]:hello\n");
  printer.show_partial(0, 1, "50%");
  EXPECT_EQ(out.taken(), "") << "unchanged since drawn: not drawn again";
  printer.show_partial(0, 1, "50%\r60%");
  EXPECT_EQ(out.taken(), "[rank0]:60%") << "drawn again on a line of its own";
  printer.print(line_of(0, "50%\r60%\r100%"));
  EXPECT_EQ(out.taken(), "\r[rank0]:100%\n");
}

TEST_F(Printer, ADrawingInterruptedIsCompletedOnALineOfItsOwnAsDrawn) {
  printer.show_partial(2, 1, "a\rb");
  printer.show_partial(3, 1, "c");
  printer.print(line_of(2, "a\rbe"));
  printer.print(line_of(3, "cd"));
  EXPECT_EQ(out.taken(), "[rank2]:b\n[rank3]:c\n[rank2]:be\n[rank3]:cd\n");
}

TEST_F(Printer, StdoutAndStderrOfOneRankAreTwoLines) {
  printer.show_partial(0, 1, "out");
  printer.print(line_of(0, "err", 2));
  printer.print(line_of(0, "out!", 1));
  EXPECT_EQ(out.taken(), "[rank0]:out\n[rank0]:err\n[rank0]:out!\n");
}

TEST_F(Printer, CrlfLinesPrintAsPlainLines) {
  printer.show_partial(0, 1, "step 1\r");  // its '\n' late: the '\r' shows nothing
  printer.print(line_of(0, "step 1\r"));
  EXPECT_EQ(out.taken(), "[rank0]:step 1\n");
  printer.show_partial(0, 1, "step 2");  // its "\r\n" late
  printer.print(line_of(0, "step 2\r"));
  EXPECT_EQ(out.taken(), "[rank0]:step 2\n");
}

TEST_F(Printer, OnlyReturnsSoFarDrawNothing) {
  printer.show_partial(0, 1, "\r");
  printer.print(line_of(1, "x"));
  EXPECT_EQ(out.taken(), "[rank1]:x\n");
}

TEST(LinePrinter, UnprefixedARedrawingIsTheTextAlone) {
  Output out;
  LinePrinter printer("", -1, out.file());
  printer.show_partial(0, 1, "10%");
  printer.show_partial(0, 1, "10%\r20%");
  printer.print(line_of(0, "10%\r20%\r30%"));
  EXPECT_EQ(out.taken(), "10%\r20%\r30%\n");
}

TEST(LinePrinter, WithGrepNoPartialLineShows) {
  Output out;
  LinePrinter printer("loss", -1, out.file());
  printer.set_prefixed(true);
  EXPECT_FALSE(printer.shows_partials());
  printer.show_partial(0, 1, "loss 0.");
  EXPECT_EQ(out.taken(), "");
  printer.print(line_of(0, "loss 0.5"));
  printer.print(line_of(0, "accuracy"));
  EXPECT_EQ(out.taken(), "[rank0]:loss 0.5\n");
}

TEST(LinePrinter, WithTailPartialLinesShowOnlyOnceTheTailIsOut) {
  Output out;
  LinePrinter printer("", 1, out.file());
  printer.set_prefixed(true);
  printer.print(line_of(0, "old"));
  printer.print(line_of(0, "last"));
  printer.show_partial(0, 1, "bar");
  EXPECT_EQ(out.taken(), "");
  printer.flush_tail();
  EXPECT_EQ(out.taken(), "[rank0]:last\n");
  printer.show_partial(0, 1, "bar");
  EXPECT_EQ(out.taken(), "[rank0]:bar");
}

void append(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::app);
  file << text;
}

// WaitingLines with the real readers: a line's start shows once it is still
// waiting at the next look.
struct Following : ::testing::Test {
  test_support::TempDir dir;
  Output out;
  LinePrinter printer{"", -1, out.file()};
  WaitingLines::Sources sources;
  WaitingLines waiting;

  Following() {
    printer.set_prefixed(true);
    for (int rank = 0; rank < 2; ++rank) {
      append(path(rank), "");  // there before it is opened, as a worker's log is
      sources.push_back(std::make_unique<jobs::LogLineSource>(rank, 1, path(rank)));
    }
  }
  std::string path(int rank) const { return dir.path() + "/rank" + std::to_string(rank) + ".log"; }
  // One poll of dlaunch logs --follow.
  void poll() {
    jobs::merge_available(sources, [&](const jobs::MergedLine& line) { printer.print(line); });
    waiting.show(sources, printer);
  }
};

TEST_F(Following, ABarShowsFromTheSecondLookAndEndsWhenItsNewlineComes) {
  append(path(0), "start\n 10%");
  poll();
  EXPECT_EQ(out.taken(), "[rank0]:start\n") << "held for the first time: it may end before the next look";
  append(path(0), "\r 20%");
  poll();
  EXPECT_EQ(out.taken(), "[rank0]: 20%");
  append(path(0), "\r 30%");
  poll();
  EXPECT_EQ(out.taken(), "\r[rank0]: 30%");
  append(path(0), "\r100%\n");
  poll();
  EXPECT_EQ(out.taken(), "\r[rank0]:100%\n");
}

TEST_F(Following, ALineEndedBeforeTheNextLookIsNeverCut) {
  append(path(1), "hal");
  poll();
  append(path(1), "f\nnew");  // "new" is another line: it waits a look of its own
  poll();
  EXPECT_EQ(out.taken(), "[rank1]:half\n");
  poll();
  EXPECT_EQ(out.taken(), "[rank1]:new");
}

TEST_F(Following, ForgetStartsOverWithNewSources) {
  append(path(0), "bar");
  poll();
  waiting.forget();
  poll();
  EXPECT_EQ(out.taken(), "") << "after forget() a held line waits a look again";
  poll();
  EXPECT_EQ(out.taken(), "[rank0]:bar");
}

TEST_F(Following, FinishedFilesCompleteTheirDrawnLines) {
  append(path(0), "50%");
  poll();
  poll();
  EXPECT_EQ(out.taken(), "[rank0]:50%");
  for (auto& source : sources) source->finish();
  poll();
  EXPECT_EQ(out.taken(), "\n");
}

}  // namespace
}  // namespace dlaunch::cli

namespace dlaunch::cli {
namespace {

// dlaunch logs --json: one object a line, whatever bytes the worker wrote.
TEST(LinePrinterJson, EachLineIsOneObjectWithRankStreamTimeAndText) {
  Output out;
  LinePrinter printer("", -1, out.file());
  printer.set_prefixed(true);  // the prefix is the text's, not JSON's: never shown
  printer.set_format(LineFormat::kJsonLines);
  jobs::MergedLine timed = line_of(3, "loss 0.5 \"quoted\"", 2);
  timed.unix_ms = 1733390000123;
  printer.print(timed);
  printer.print(line_of(0, "bad \xff byte\r"));
  EXPECT_EQ(out.taken(),
            "{\"rank\":3,\"stream\":\"stderr\",\"time_ms\":1733390000123,\"line\":\"loss 0.5 \\\"quoted\\\"\"}\n"
            "{\"rank\":0,\"stream\":\"stdout\",\"time_ms\":null,\"line\":\"bad \xef\xbf\xbd byte\\r\"}\n");
}

TEST(LinePrinterJson, TailAndGrepApplyAndNothingPartialIsDrawn) {
  Output out;
  LinePrinter printer("keep", 1, out.file());
  printer.set_format(LineFormat::kJsonLines);
  printer.print(line_of(0, "keep 1"));
  printer.print(line_of(0, "drop"));
  printer.print(line_of(1, "keep 2"));
  printer.flush_tail();
  EXPECT_EQ(out.taken(), "{\"rank\":1,\"stream\":\"stdout\",\"time_ms\":null,\"line\":\"keep 2\"}\n");
  LinePrinter plain("", -1, out.file());
  plain.set_format(LineFormat::kJsonLines);
  EXPECT_FALSE(plain.shows_partials());
}

}  // namespace
}  // namespace dlaunch::cli
