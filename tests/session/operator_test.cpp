// Operator actions on a logged-on session (what the admin endpoint calls):
// a SequenceReset of our own.
#include <gtest/gtest.h>

#include "fixture.hpp"

namespace hft::session::test {
namespace {

class SessionOperatorTest : public SessionFixture {
 protected:
  void SetUp() override { make(base_settings()); }
};

TEST_F(SessionOperatorTest, sequence_reset_gap_fill_moves_our_next_msg_seq_num) {
  logon();
  ASSERT_EQ(session->next_sender_seq(), 2u);
  ASSERT_EQ(session->send_sequence_reset(10, true, at()), SendStatus::kOk);
  const std::string sr = out.pop();
  EXPECT_EQ(field(sr, "35"), "4");
  EXPECT_EQ(field(sr, "34"), "2");
  EXPECT_EQ(field(sr, "36"), "10");
  EXPECT_EQ(field(sr, "123"), "Y");
  EXPECT_EQ(session->next_sender_seq(), 10u);
  ASSERT_EQ(send_order("ORD1"), SendStatus::kOk);
  EXPECT_EQ(field(out.pop(), "34"), "10") << "the next message carries NewSeqNo";
}

TEST_F(SessionOperatorTest, sequence_reset_without_gap_fill_has_no_gap_fill_flag) {
  logon();
  ASSERT_EQ(session->send_sequence_reset(5, false, at()), SendStatus::kOk);
  const std::string sr = out.pop();
  EXPECT_EQ(field(sr, "36"), "5");
  EXPECT_EQ(field(sr, "123"), "");
  EXPECT_EQ(session->next_sender_seq(), 5u);
}

TEST_F(SessionOperatorTest, sequence_reset_refuses_a_number_that_does_not_move_ours) {
  logon();
  EXPECT_EQ(session->send_sequence_reset(2, true, at()), SendStatus::kEncodeError);
  EXPECT_EQ(session->send_sequence_reset(1, false, at()), SendStatus::kEncodeError);
  EXPECT_EQ(session->send_sequence_reset(kMaxSeqNum + 1, true, at()), SendStatus::kEncodeError);
  EXPECT_TRUE(out.messages.empty());
  EXPECT_EQ(session->next_sender_seq(), 2u);
}

TEST_F(SessionOperatorTest, sequence_reset_needs_a_logged_on_session) {
  EXPECT_EQ(session->send_sequence_reset(10, true, at()), SendStatus::kNotLoggedOn);
  EXPECT_EQ(session->next_sender_seq(), 1u);
}

}  // namespace
}  // namespace hft::session::test
