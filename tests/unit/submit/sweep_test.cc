// --sweep NAME=V1,V2: the axes and their cartesian product.
#include "submit/sweep.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_support/input_error.h"

namespace dlaunch::submit {
namespace {

using test_support::input_error_of;
using Strings = std::vector<std::string>;

std::string sweep_error(const Strings& texts) {
  return input_error_of([&] { parse_sweep(texts, "--sweep"); });
}

TEST(Sweep, AnAxisIsANameAndItsCommaSeparatedValues) {
  SweepAxis axis = parse_sweep_axis("lr=0.1,0.01, 1e-3", "--sweep");
  EXPECT_EQ(axis.name, "lr");
  EXPECT_EQ(axis.values, (Strings{"0.1", "0.01", "1e-3"}));
  EXPECT_EQ(parse_sweep_axis("model_size-x=small", "--sweep").values, Strings{"small"});
  // A value may hold '=' and anything printable but a comma.
  EXPECT_EQ(parse_sweep_axis("opt=adam=1,a b", "--sweep").values, (Strings{"adam=1", "a b"}));
}

TEST(Sweep, TheProductVariesTheLastAxisFastest) {
  auto tasks = sweep_tasks(parse_sweep({"lr=0.1,0.01", "bs=32,64"}, "--sweep"));
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[0].args, (Strings{"--lr=0.1", "--bs=32"}));
  EXPECT_EQ(tasks[1].args, (Strings{"--lr=0.1", "--bs=64"}));
  EXPECT_EQ(tasks[2].args, (Strings{"--lr=0.01", "--bs=32"}));
  EXPECT_EQ(tasks[3].args, (Strings{"--lr=0.01", "--bs=64"}));
  for (std::size_t i = 0; i < tasks.size(); ++i) EXPECT_EQ(tasks[i].index, static_cast<std::int64_t>(i));
  EXPECT_EQ(tasks[2].values, (std::vector<std::pair<std::string, std::string>>{{"lr", "0.01"}, {"bs", "32"}}));
  EXPECT_EQ(describe_values(tasks[2]), "lr=0.01 bs=32");
  EXPECT_EQ(describe_values(SweepTask{}), "");
}

TEST(Sweep, OneAxisIsOneTaskPerValue) {
  auto tasks = sweep_tasks(parse_sweep({"seed=1,2,3"}, "--sweep"));
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[2].args, Strings{"--seed=3"});
}

TEST(Sweep, RefusalsNameTheSweepAndSayWhatToGive) {
  EXPECT_NE(sweep_error({"lr"}).find("sweep 'lr' (from --sweep): expected NAME=V1,V2,..."), std::string::npos)
      << sweep_error({"lr"});
  for (const char* text : {"=1,2", "1lr=1", "l r=1", "lr\"=1", "--lr=1", "l.r=1"}) {
    std::string message = sweep_error({text});
    EXPECT_NE(message.find("is no sweep name"), std::string::npos) << text << ": " << message;
    EXPECT_NE(message.find("e.g. --sweep lr=0.1,0.01"), std::string::npos) << message;
  }
  for (const char* text : {"lr=", "lr=1,", "lr=,1", "lr=1,,2", "lr= "})
    EXPECT_NE(sweep_error({text}).find("a value is empty"), std::string::npos) << text;
  EXPECT_NE(sweep_error({"lr=1,2,1"}).find("the value '1' is given twice"), std::string::npos);
  EXPECT_NE(sweep_error({"lr=1", "bs=2", "lr=3"}).find("'lr' is swept twice"), std::string::npos);
}

// A value list separated by ';' or, quoted, by spaces would be one value:
// the refusal gives the comma form to type instead.
TEST(Sweep, SemicolonsAndSpacedNumbersPointAtTheComma) {
  EXPECT_EQ(sweep_error({"lr=1e-3;1e-4"}),
            "sweep 'lr=1e-3;1e-4' (from --sweep): the values are separated by ';', which would make them "
            "one value. Separate them with commas: --sweep lr=1e-3,1e-4");
  EXPECT_NE(sweep_error({"opt=adam; sgd"}).find("--sweep opt=adam,sgd"), std::string::npos);
  EXPECT_NE(sweep_error({"lr=0.1 0.01"}).find("separated by spaces, which would make them one value. "
                                              "Separate them with commas: --sweep lr=0.1,0.01"),
            std::string::npos)
      << sweep_error({"lr=0.1 0.01"});
  EXPECT_NE(sweep_error({"bs=16,32 64"}).find("--sweep bs=16,32,64"), std::string::npos);
  // Words that are not all numbers may be one value with a space in it.
  EXPECT_EQ(parse_sweep_axis("opt=adam w,sgd", "--sweep").values, (Strings{"adam w", "sgd"}));
}

std::string split_sweep_error(const Strings& sweeps, const Strings& command) {
  return input_error_of([&] { refuse_split_sweep(sweeps, command); });
}

// `--sweep lr=0.1 0.01 train.py`: the shell made 0.01 the program.
TEST(Sweep, ANumberInThePlaceOfTheProgramIsASweepValueSplitOff) {
  EXPECT_EQ(split_sweep_error({"lr=0.1"}, {"0.01", "train.py"}),
            "--sweep lr=0.1 is followed by '0.01', which would be the program to run: the values of a "
            "--sweep are one word, separated by commas with no space. Give --sweep lr=0.1,0.01");
  EXPECT_NE(split_sweep_error({"bs=8", "lr=0.1"}, {"1e-2", "1e-3", "train.py", "5"})
                .find("Give --sweep lr=0.1,1e-2,1e-3"),
            std::string::npos);
  // "lr=0.1, 0.01" and "lr=0.1 , 0.01": the commas were right, the spaces not.
  EXPECT_NE(split_sweep_error({"lr=0.1,"}, {"0.01", "train.py"}).find("Give --sweep lr=0.1,0.01"),
            std::string::npos);
  EXPECT_NE(split_sweep_error({"lr=0.1"}, {",", "0.01", "train.py"}).find("Give --sweep lr=0.1,0.01"),
            std::string::npos);
  // A real program, or no --sweep at all, passes.
  EXPECT_NO_THROW(refuse_split_sweep({"lr=0.1,0.01"}, {"python3", "train.py", "0.5"}));
  EXPECT_NO_THROW(refuse_split_sweep({"lr=0.1,0.01"}, {"./2stage.sh"}));
  EXPECT_NO_THROW(refuse_split_sweep({}, {"0.01"}));
  EXPECT_NO_THROW(refuse_split_sweep({"lr=0.1"}, {}));
}

TEST(Sweep, AProductOverTheLimitIsRefusedBeforeItIsMade) {
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += fmt::format("{}{}", i ? "," : "", i);
  EXPECT_EQ(sweep_tasks(parse_sweep({"a=" + hundred, "b=" + hundred}, "--sweep")).size(), 10000u);
  std::string message = sweep_error({"a=" + hundred, "b=" + hundred, "c=1,2"});
  EXPECT_NE(message.find("sweep (from --sweep) makes more than 10000 tasks with 'c=1,2'"), std::string::npos)
      << message;
}

// A list in brackets, as Python or JSON writes it, would be cut at its
// commas into "[0.1" and "0.01]": refused with the bare form.
TEST(Sweep, ABracketedListIsRefusedWithTheBareCommaForm) {
  std::string message = sweep_error({"lr=[0.1,0.01]"});
  EXPECT_NE(message.find("a task would get --lr=[0.1"), std::string::npos) << message;
  EXPECT_NE(message.find("--sweep lr=0.1,0.01"), std::string::npos) << message;
  EXPECT_NE(sweep_error({"bs=(32, 64)"}).find("--sweep bs=32, 64"), std::string::npos) << sweep_error({"bs=(32, 64)"});
  EXPECT_NE(sweep_error({"lr=0.1,0.01]"}), "no error");
  // Brackets that stay whole within one value are that value.
  EXPECT_EQ(sweep_error({"lr=0.1,0.01"}), "no error");
  EXPECT_EQ(sweep_error({"layers=[64],[128]"}), "no error");
}

}  // namespace
}  // namespace dlaunch::submit
