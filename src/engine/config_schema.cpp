// The configuration schema: every key libhft reads, with its type, default
// and meaning. docs/config.md is generated from this table
// (config_schema_markdown()) and a test keeps the two equal.
#include <array>

#include "hft/engine/config.hpp"

namespace hft::engine {

namespace {

constexpr std::int64_t kSec = 1'000'000'000;
constexpr std::int64_t kMilli = 1'000'000;
constexpr std::int64_t kMicro = 1'000;
constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

using T = ValueType;
using S = KeySupport;
constexpr KeyScope kEngine = KeyScope::kEngine;

constexpr std::array kSchema = {
    // --- Session identity -------------------------------------------------
    KeySpec{.name = "AcceptorTemplate", .type = T::kBool, .default_value = "N",
            .description = "Acceptor: this [SESSION] is a template, not a session. SenderCompID and TargetCompID "
                           "(and the SubIDs/LocationIDs) may hold `*` (any characters, e.g. `TargetCompID=*` or "
                           "`CLIENT*`); a connection whose Logon names a session no [SESSION] defines but that "
                           "matches the template gets that session, with the template's settings: its store is "
                           "created under FileStorePath at that Logon, and Username/Password, LogonTime and "
                           "MaxConnections apply as to any session. Configured sessions are matched first, then "
                           "templates in file order. A template's sessions log to the engine's files, so "
                           "FileLogPath cannot be set in its section."},
    KeySpec{.name = "ConnectionType", .type = T::kEnum,
            .description = "Required. `initiator` connects out to SocketConnectHost/Port; `acceptor` listens on "
                           "SocketAcceptPort.",
            .choices = "initiator|acceptor"},
    KeySpec{.name = "BeginString", .type = T::kEnum,
            .description = "Required. FIX version of the session (tag 8). FIXT.1.1 needs DefaultApplVerID.",
            .choices = "FIX.4.0|FIX.4.1|FIX.4.2|FIX.4.3|FIX.4.4|FIXT.1.1"},
    KeySpec{.name = "SenderCompID", .type = T::kString, .description = "Required. Our CompID (tag 49)."},
    KeySpec{.name = "SenderSubID", .type = T::kString,
            .description = "Our SubID (tag 50), sent on every message; part of the session identity."},
    KeySpec{.name = "SenderLocationID", .type = T::kString,
            .description = "Our LocationID (tag 142), sent on every message; part of the session identity."},
    KeySpec{.name = "TargetCompID", .type = T::kString, .description = "Required. The counterparty's CompID (tag 56)."},
    KeySpec{.name = "TargetSubID", .type = T::kString,
            .description = "The counterparty's SubID (tag 57); part of the session identity."},
    KeySpec{.name = "TargetLocationID", .type = T::kString,
            .description = "The counterparty's LocationID (tag 143); part of the session identity."},
    KeySpec{.name = "SessionQualifier", .type = T::kString,
            .description = "Distinguishes initiator sessions that share CompIDs. Not allowed for an acceptor."},
    KeySpec{.name = "DefaultApplVerID", .type = T::kEnum,
            .description = "Required with BeginString=FIXT.1.1: application version (tag 1137 in Logon), as a "
                           "number or a name.",
            .choices = "2|3|4|5|6|7|8|9|FIX.4.0|FIX.4.1|FIX.4.2|FIX.4.3|FIX.4.4|FIX.5.0|FIX.5.0SP1|FIX.5.0SP2"},

    // --- Schedule ---------------------------------------------------------
    KeySpec{.name = "StartTime", .type = T::kTimeOfDay,
            .description = "Required unless NonStopSession=Y. Daily (or, with StartDay, weekly) session start."},
    KeySpec{.name = "EndTime", .type = T::kTimeOfDay,
            .description = "Required unless NonStopSession=Y. Session end: sequence numbers reset at the next "
                           "start. Equal to StartTime: a 24-hour session."},
    KeySpec{.name = "StartDay", .type = T::kDay,
            .description = "First day of a weekly session; needs EndDay."},
    KeySpec{.name = "EndDay", .type = T::kDay, .description = "Last day of a weekly session; needs StartDay."},
    KeySpec{.name = "LogonTime", .type = T::kTimeOfDay,
            .description = "Start of the daily (or, with LogonDay, weekly) window in which logons are allowed, "
                           "within StartTime..EndTime. Outside LogonTime..LogoutTime an initiator does not "
                           "connect and an acceptor refuses connections. Default: StartTime."},
    KeySpec{.name = "LogoutTime", .type = T::kTimeOfDay,
            .description = "End of the logon window, within StartTime..EndTime: a logged-on session logs out "
                           "then (sequence numbers are kept until EndTime). Default: EndTime."},
    KeySpec{.name = "LogonDay", .type = T::kDay, .description = "Weekly sessions: day of LogonTime. Default: StartDay."},
    KeySpec{.name = "LogoutDay", .type = T::kDay, .description = "Weekly sessions: day of LogoutTime. Default: EndDay."},
    KeySpec{.name = "TimeZone", .type = T::kTimeZone,
            .description = "Time zone of the schedule times (IANA name such as America/New_York). Default: UTC. "
                           "Not together with UseLocalTime=Y."},
    KeySpec{.name = "UseLocalTime", .type = T::kBool, .default_value = "N",
            .description = "Schedule and logon times are in the host's local time zone ($TZ, else "
                           "/etc/localtime) instead of UTC."},
    KeySpec{.name = "NonStopSession", .type = T::kBool, .default_value = "N",
            .description = "Y: the session never ends; StartTime/EndTime are not needed."},

    // --- Session protocol -------------------------------------------------
    KeySpec{.name = "HeartBtInt", .type = T::kDuration,
            .description = "Heartbeat interval sent in Logon (tag 108). Required (> 0) for an initiator; an "
                           "acceptor uses the counterparty's.",
            .min = 0, .max = 86400, .unit_ns = kSec},
    KeySpec{.name = "LogonTimeout", .type = T::kDuration, .default_value = "10",
            .description = "Time to wait for the Logon answer (initiator) or the first Logon (acceptor) before "
                           "disconnecting. The [DEFAULT] value also bounds an accepted connection that has not "
                           "named a session yet.",
            .min = 1, .max = 3600, .unit_ns = kSec},
    KeySpec{.name = "Username", .type = T::kString,
            .description = "Initiator: sent as Username (553) in our Logon (FIX.4.3+; an error before). "
                           "Acceptor: the counterparty's first Logon must carry this Username, else it gets a "
                           "Logout and nothing of the session changes."},
    KeySpec{.name = "Password", .type = T::kString,
            .description = "Initiator: sent as Password (554) in our Logon, before FIX.4.3 as RawData (95/96). "
                           "Acceptor: the counterparty's first Logon must carry it there (compared in constant "
                           "time), else it gets a Logout and nothing of the session changes (141=Y included)."},
    KeySpec{.name = "LogoutTimeout", .type = T::kDuration, .default_value = "2",
            .description = "Time to wait for the Logout answer before disconnecting.", .min = 1, .max = 3600,
            .unit_ns = kSec},
    KeySpec{.name = "ReconnectInterval", .type = T::kDuration, .default_value = "30",
            .description = "Initiator: wait between rounds of connection attempts and after a disconnect.",
            .min = 0, .max = 86400, .unit_ns = kSec},
    KeySpec{.name = "ResetOnLogon", .type = T::kBool, .default_value = "N",
            .description = "Reset both sequence numbers to 1 at every Logon (sends 141=Y)."},
    KeySpec{.name = "ResetOnLogout", .type = T::kBool, .default_value = "N",
            .description = "Reset both sequence numbers to 1 after a normal Logout."},
    KeySpec{.name = "ResetOnDisconnect", .type = T::kBool, .default_value = "N",
            .description = "Reset both sequence numbers to 1 after any disconnect."},
    KeySpec{.name = "SendResetSeqNumFlag", .type = T::kBool, .default_value = "N",
            .description = "Initiator only (an error on an acceptor): reset both sequence numbers to 1 and "
                           "send ResetSeqNumFlag (141=Y) in every Logon it sends, as ResetOnLogon does for an "
                           "initiator."},
    KeySpec{.name = "RefreshOnLogon", .type = T::kBool, .default_value = "N",
            .description = "Not supported: the store caches its sequence numbers and is not reloaded at Logon; "
                           "a standby takes over by starting its engine on the journal once the primary has "
                           "stopped.",
            .support = S::kUnsupported},
    KeySpec{.name = "SendRedundantResendRequests", .type = T::kBool, .default_value = "N",
            .description = "Send a ResendRequest for a gap even if one covering it is outstanding."},
    KeySpec{.name = "ResendRequestChunkSize", .type = T::kInt, .default_value = "0",
            .description = "Ask for at most this many messages per ResendRequest; 0: the whole gap at once.",
            .min = 0, .max = 1'000'000},
    KeySpec{.name = "EnableLastMsgSeqNumProcessed", .type = T::kBool, .default_value = "N",
            .description = "Put LastMsgSeqNumProcessed (369), the last MsgSeqNum received in sequence, on every "
                           "message sent (resends keep the original's)."},
    KeySpec{.name = "SendNextExpectedMsgSeqNum", .type = T::kBool, .default_value = "N",
            .description = "Send NextExpectedMsgSeqNum (tag 789) in Logon and recover gaps from it (FIX.4.4+)."},
    KeySpec{.name = "CheckCompID", .type = T::kBool, .default_value = "Y",
            .description = "Reject messages whose CompIDs do not match the session."},
    KeySpec{.name = "CheckLatency", .type = T::kBool, .default_value = "Y",
            .description = "Reject messages whose SendingTime is further than MaxLatency from now."},
    KeySpec{.name = "MaxLatency", .type = T::kDuration, .default_value = "120",
            .description = "Largest allowed SendingTime difference with CheckLatency=Y.", .min = 1,
            .max = 86400, .unit_ns = kSec},
    KeySpec{.name = "MillisecondsInTimeStamp", .type = T::kBool, .default_value = "Y",
            .description = "Timestamps carry milliseconds (FIX.4.2+), unless TimestampPrecision says otherwise."},
    KeySpec{.name = "TimestampPrecision", .type = T::kEnum, .default_value = "3",
            .description = "Digits of fractional seconds in SendingTime, OrigSendingTime and the applications' "
                           "TransactTime: 0, 3, 6 or 9, or QuickFIX/J's TimeStampPrecision values SECONDS, "
                           "MILLIS, MICROS, NANOS (keys are case-insensitive); overrides MillisecondsInTimeStamp.",
            .choices = "0|3|6|9|SECONDS|MILLIS|MICROS|NANOS"},
    KeySpec{.name = "PersistMessages", .type = T::kBool, .default_value = "Y",
            .description = "Journal messages under FileStorePath so a ResendRequest replays them and sequence "
                           "numbers survive a restart; N: no journal: the last 1024 messages are kept in memory "
                           "for resends (fewer when they average more than 1 KiB; older ones are gap-filled)."},
    KeySpec{.name = "UseDataDictionary", .type = T::kBool, .default_value = "Y",
            .description = "Validate messages against DataDictionary (or Transport/AppDataDictionary for "
                           "FIXT.1.1), which is then required. N: session messages only (built in)."},
    KeySpec{.name = "DataDictionary", .type = T::kPath,
            .description = "QuickFIX XML dictionary for FIX.4.x sessions."},
    KeySpec{.name = "TransportDataDictionary", .type = T::kPath,
            .description = "QuickFIX XML dictionary of the FIXT.1.1 session layer."},
    KeySpec{.name = "AppDataDictionary", .type = T::kPath,
            .description = "FIXT.1.1 application dictionary. AppDataDictionary.<version> (e.g. "
                           "AppDataDictionary.FIX.5.0SP2) is accepted for the DefaultApplVerID's version only: "
                           "a session validates one application version, so another version is an error.",
            .qualified = true},
    KeySpec{.name = "ValidateLengthAndChecksum", .type = T::kBool, .default_value = "Y",
            .description = "Drop messages whose BodyLength or CheckSum is wrong."},
    KeySpec{.name = "ValidateChecksum", .type = T::kBool, .default_value = "Y",
            .description = "QuickFIX/J's key: N accepts a wrong CheckSum (the 10=ddd shape is still required); "
                           "either this key or ValidateLengthAndChecksum at N turns the check off."},
    KeySpec{.name = "RejectGarbledMessage", .type = T::kBool, .default_value = "N",
            .description = "QuickFIX/J's key: a framed but garbled message (wrong CheckSum, a tag like 49foo=, "
                           "no MsgType, a bad group count) that is next in sequence gets a Reject \"Message failed "
                           "basic validity check\" (Text, RefSeqNum, RefMsgType; no 373) and its number is "
                           "consumed, instead of being ignored. A garbled Logon still disconnects."},
    KeySpec{.name = "ValidateFieldsOutOfOrder", .type = T::kBool, .default_value = "Y",
            .description = "Reject header/body/trailer fields out of place."},
    KeySpec{.name = "ValidateFieldsHaveValues", .type = T::kBool, .default_value = "Y",
            .description = "Reject fields with empty values."},
    KeySpec{.name = "ValidateUserDefinedFields", .type = T::kBool, .default_value = "Y",
            .description = "Validate user-defined fields (tags 5000-9999) against the dictionary."},
    KeySpec{.name = "AllowUnknownMsgFields", .type = T::kBool, .default_value = "N",
            .description = "Accept fields not defined for the message type instead of rejecting it."},
    KeySpec{.name = "PreserveMessageFieldsOrder", .type = T::kBool, .default_value = "N",
            .description = "Accepted and ignored: libhft parses in place and always keeps the wire order.",
            .support = S::kIgnored},
    KeySpec{.name = "MaxMessageSize", .type = T::kSize, .default_value = "64K",
            .description = "Largest inbound message read. A larger one, with a BodyLength up to 16 times this, "
                           "is skipped as it arrives and answered with a Reject (SessionRejectReason 99, Other) "
                           "naming the limit, its MsgSeqNum consumed; a larger BodyLength is garbage and dropped. "
                           "At most ReceiveBufferSize.",
            .min = 256, .max = kGiB},
    KeySpec{.name = "MaxFieldsPerMessage", .type = T::kInt, .default_value = "16384",
            .description = "Most fields a received message may have; the session's field index is allocated "
                           "for this many when it is created (12 bytes a field). A message with more is "
                           "answered with a Reject (SessionRejectReason 99, Other) and its MsgSeqNum is "
                           "consumed.",
            .min = 1, .max = 1 << 20},
    KeySpec{.name = "MaxResendBatch", .type = T::kInt, .default_value = "1000",
            .description = "Messages replayed per loop pass when answering a ResendRequest, so a long replay "
                           "does not stall other sessions.",
            .min = 1, .max = 1'000'000},

    // --- Throttling (docs/session.md, "Throttling") -----------------------
    KeySpec{.name = "OutgoingThrottleLimit", .type = T::kInt, .default_value = "0",
            .description = "Most application messages the session sends in any window of "
                           "OutgoingThrottleIntervalMs (0: no limit). Session messages (Heartbeat, TestRequest, "
                           "Reject, Logout, ...) and resends for a ResendRequest do not count and are never "
                           "refused; what a send over the limit does is OutgoingThrottleAction.",
            .min = 0, .max = 1'000'000},
    KeySpec{.name = "OutgoingThrottleIntervalMs", .type = T::kDuration, .default_value = "1000",
            .description = "The window of OutgoingThrottleLimit: no more than the limit in any interval this "
                           "long (timed on the monotonic clock).",
            .min = 1, .max = 60'000, .unit_ns = kMilli},
    KeySpec{.name = "OutgoingThrottleAction", .type = T::kEnum, .default_value = "reject",
            .description = "`reject`: a send over OutgoingThrottleLimit returns SendStatus::kThrottled (nothing "
                           "stored or sent, no sequence number used; from a SendRing it is reported to "
                           "on_queued_send_failed). `queue`: the message is stored with its sequence number and "
                           "sent, in order, once the window allows, up to OutgoingThrottleQueueSize held "
                           "messages (one more is refused with kThrottled); session messages sent meanwhile wait "
                           "behind them. With an initiator, OutgoingThrottleIntervalMs must then be shorter than "
                           "HeartBtInt.",
            .choices = "reject|queue"},
    KeySpec{.name = "OutgoingThrottleQueueSize", .type = T::kInt, .default_value = "1000",
            .description = "With OutgoingThrottleAction=queue: application messages held at most. Without "
                           "FileStorePath the in-memory store keeps this many more messages for it.",
            .min = 1, .max = 1'000'000},
    KeySpec{.name = "IncomingThrottleLimit", .type = T::kInt, .default_value = "0",
            .description = "Most application messages accepted from the counterparty in any window of "
                           "IncomingThrottleIntervalMs (0: no limit). Session messages, messages held behind a "
                           "gap and PossDup resends while our ResendRequest is answered do not count; one over "
                           "the limit gets IncomingThrottleAction.",
            .min = 0, .max = 1'000'000},
    KeySpec{.name = "IncomingThrottleIntervalMs", .type = T::kDuration, .default_value = "1000",
            .description = "The window of IncomingThrottleLimit (monotonic clock).", .min = 1, .max = 60'000,
            .unit_ns = kMilli},
    KeySpec{.name = "IncomingThrottleAction", .type = T::kEnum, .default_value = "reject",
            .description = "`reject`: a message over IncomingThrottleLimit is not processed and gets a Reject "
                           "(35=3, 58=Throttle limit exceeded, SessionRejectReason 99 where the version has it); "
                           "its MsgSeqNum is consumed, so no ResendRequest follows. `logout`: that Reject, then a "
                           "Logout with the same Text (disconnect on its answer or after LogoutTimeout). "
                           "`disconnect`: the connection is closed at once (logged); the message is not accepted "
                           "and is asked for again after the next logon.",
            .choices = "reject|logout|disconnect"},

    // --- Sockets ----------------------------------------------------------
    KeySpec{.name = "SocketConnectHost", .type = T::kHost,
            .description = "Initiator, required: primary host. SocketConnectHost1, 2, ... are failover hosts, "
                           "tried in order.",
            .numbered = true},
    KeySpec{.name = "SocketConnectPort", .type = T::kPort,
            .description = "Initiator, required: primary port. SocketConnectPort1, 2, ... go with "
                           "SocketConnectHost1, 2, ...",
            .min = 1, .max = 65535, .numbered = true},
    KeySpec{.name = "SocketConnectSourceHost", .type = T::kHost,
            .description = "Not supported: libhft does not bind the local address of outgoing connections.",
            .support = S::kUnsupported, .numbered = true},
    KeySpec{.name = "SocketConnectSourcePort", .type = T::kPort,
            .description = "Not supported: libhft does not bind the local port of outgoing connections.",
            .min = 0, .max = 65535, .support = S::kUnsupported, .numbered = true},
    KeySpec{.name = "SocketConnectTimeoutMs", .type = T::kDuration, .default_value = "5000",
            .description = "Initiator: a connect attempt with no answer after this long fails; the next "
                           "endpoint is tried.",
            .min = 1, .max = 600'000, .unit_ns = kMilli},
    KeySpec{.name = "SocketAcceptPort", .type = T::kPort,
            .description = "Acceptor, required: port to listen on (0: any free port).", .min = 0, .max = 65535},
    KeySpec{.name = "SocketAcceptHost", .type = T::kHost, .default_value = "0.0.0.0",
            .description = "Acceptor: local address to listen on (`::` for all IPv6 addresses)."},
    KeySpec{.name = "SocketReuseAddress", .type = T::kBool, .default_value = "Y",
            .description = "Accepted and ignored: libhft always sets SO_REUSEADDR on listening sockets.",
            .support = S::kIgnored},
    KeySpec{.name = "SocketNodelay", .type = T::kBool, .default_value = "Y",
            .description = "TCP_NODELAY: send small messages at once (no Nagle coalescing)."},
    KeySpec{.name = "SocketQuickAck", .type = T::kBool, .default_value = "N",
            .description = "TCP_QUICKACK, re-armed after every read: acknowledge at once instead of delaying."},
    KeySpec{.name = "SocketBusyPoll", .type = T::kDuration, .default_value = "0",
            .description = "SO_BUSY_POLL: the kernel spins on the device queue for up to this long in a read "
                           "(0: off). Needs CAP_NET_ADMIN above net.core.busy_read; a refusal is logged.",
            .min = 0, .max = 1'000'000, .unit_ns = kMicro},
    KeySpec{.name = "SocketSendBufferSize", .type = T::kSize, .default_value = "0",
            .description = "SO_SNDBUF (the kernel doubles it); 0: system default.", .min = 0, .max = kGiB},
    KeySpec{.name = "SocketReceiveBufferSize", .type = T::kSize, .default_value = "0",
            .description = "SO_RCVBUF (the kernel doubles it); 0: system default.", .min = 0, .max = kGiB},
    KeySpec{.name = "ReceiveBufferSize", .type = T::kSize, .default_value = "1M",
            .description = "The connection's receive buffer in user space, allocated once; a full buffer "
                           "closes the connection instead of growing.",
            .min = 4 * kKiB, .max = kGiB},
    KeySpec{.name = "SendBufferSize", .type = T::kSize, .default_value = "4M",
            .description = "Outbound buffer for bytes the socket could not take at once; when full, sends "
                           "report an overflow and the connection is closed (resent after the next logon).",
            .min = 0, .max = kGiB},
    KeySpec{.name = "SocketUseSSL", .type = T::kBool, .default_value = "N",
            .description = "TLS (OpenSSL) on this session's connection: an initiator connects with TLS, an acceptor's "
                           "port speaks only TLS (every session on one port must agree). The TLS keys below need "
                           "SocketUseSSL=Y."},
    KeySpec{.name = "ServerCertificateFile", .type = T::kPath,
            .description = "Acceptor with SocketUseSSL=Y: its certificate (PEM, chain allowed). Required."},
    KeySpec{.name = "ServerCertificateKeyFile", .type = T::kPath,
            .description = "Acceptor: its private key (PEM, not encrypted); unset: read from ServerCertificateFile."},
    KeySpec{.name = "ClientCertificateFile", .type = T::kPath,
            .description = "Initiator: its certificate (PEM), presented when the acceptor asks for one (mutual "
                           "authentication)."},
    KeySpec{.name = "ClientCertificateKeyFile", .type = T::kPath,
            .description = "Initiator: its private key (PEM, not encrypted); unset: read from ClientCertificateFile."},
    KeySpec{.name = "CertificationAuthoritiesFile", .type = T::kPath,
            .description = "Trusted CA certificates (PEM bundle) for the peer's certificate. An initiator with neither "
                           "this nor CertificationAuthoritiesDirectory trusts the system store."},
    KeySpec{.name = "CertificationAuthoritiesDirectory", .type = T::kPath,
            .description = "Trusted CA certificates as an OpenSSL hashed directory (c_rehash)."},
    KeySpec{.name = "CertificateRevocationListFile", .type = T::kPath,
            .description = "CRLs (PEM): every certificate of the peer's chain is checked against them."},
    KeySpec{.name = "CertificateRevocationListDirectory", .type = T::kPath,
            .description = "CRLs as an OpenSSL hashed directory."},
    KeySpec{.name = "CertificateVerifyLevel", .type = T::kInt,
            .description = "Acceptor: 0 no client certificate asked (default), 1 required and verified, 2 verified "
                           "if presented (1 and 2 need a CA). Initiator: 0 the server is not verified (a warning at "
                           "start), 1 or 2 (default) it is.",
            .min = 0, .max = 2},
    KeySpec{.name = "SSLProtocol", .type = T::kString,
            .description = "TLS versions, QuickFIX's syntax (all, TLSv1, TLSv1_1, TLSv1_2, TLSv1_3, each with + or -; "
                           "one contiguous range; SSLv2/SSLv3 only as -). Unset: TLSv1_2 and TLSv1_3."},
    KeySpec{.name = "SSLCipherSuite", .type = T::kString,
            .description = "OpenSSL cipher list for TLS 1.2; TLS_* names set the TLS 1.3 suites. Unset: OpenSSL's "
                           "defaults."},

    // --- Journal and storage ----------------------------------------------
    KeySpec{.name = "FileStorePath", .type = T::kPath,
            .description = "Directory of the session's journals and sequence numbers (created if missing). "
                           "Unset, or PersistMessages=N: kept in memory only, so sequence numbers restart at 1 "
                           "with the process."},
    KeySpec{.name = "JournalSegmentSize", .type = T::kSize, .default_value = "64M",
            .description = "Largest size of one journal segment file; the next one is prepared in the background.",
            .min = kMiB, .max = 64 * kGiB},
    KeySpec{.name = "JournalInitialSegmentSize", .type = T::kSize, .default_value = "256K",
            .description = "Size of a journal's first segment; each next one is twice the size of the one before, "
                           "up to JournalSegmentSize, so disk and memory grow with what a session journals, not "
                           "with the number of sessions. The first segment is created at the session's first "
                           "message; the next one is prepared once a segment is half full, and at once after the "
                           "first rotation. A multiple of 4 KiB, at most JournalSegmentSize. Equal to "
                           "JournalSegmentSize: full-size segments from the start, the first one and its spare "
                           "created and pre-faulted at start-up (the latency setting for a few busy sessions).",
            .min = 16 * kKiB, .max = 64 * kGiB},
    KeySpec{.name = "JournalLayout", .type = T::kEnum, .default_value = "session",
            .description = "`session`: each session journals into its own journals (FileStorePath/<session>/"
                           "outbound and inbound). `shared`: the sessions of one FileStorePath journal into one "
                           "journal, FileStorePath/shared-journal, each session's records tagged with its stream "
                           "(docs/shared_journal.md); the session directories hold only seqnums.dat. One writer "
                           "and one set of segments for every session: the journal service's work, the files and "
                           "the page cache follow the bytes journaled, not the session count. Its Journal* "
                           "settings must be the same for every session of the FileStorePath; "
                           "JournalRetainSegments is not supported with it (must be 0).",
            .choices = "session|shared", .scope = kEngine},
    KeySpec{.name = "JournalPrealloc", .type = T::kBool, .default_value = "Y",
            .description = "N: nothing is prepared ahead of the writer, as in an engine without preallocation (a "
                           "lab control, hft-bench --prealloc off): each rotation creates the next segment on the "
                           "session's thread, and the thread faults in every journal page it first writes. Y: the "
                           "next segment is created and pre-faulted in the background."},
    KeySpec{.name = "JournalEvictFinished", .type = T::kBool, .default_value = "Y",
            .description = "Y: a finished journal segment leaves the page cache once written back (the service "
                           "starts its write-back as it unmaps it and drops its pages a second later), so the "
                           "journals' page cache stays about the size of the segments being written and new journal "
                           "pages reuse memory just freed. Finished segments are still read for resends, from disk. "
                           "N: they stay cached until the kernel reclaims them."},
    KeySpec{.name = "JournalEvictWritten", .type = T::kBool,
            .description = "Y: the written part of the segment being written leaves the session's mapping, "
                           "in pieces of 256 KiB once they lie 64 KiB behind the writer, and the page cache "
                           "35 s later, once the kernel's flushers have written it (the journal starts no "
                           "write-back of its own), so each journal maps a few hundred KiB however large its "
                           "segment. A resend of older messages reads them from the page cache or the disk. "
                           "Default: Y when segments grow (JournalInitialSegmentSize below "
                           "JournalSegmentSize: many sessions), N with full-size segments (the "
                           "single-session latency setting)."},
    KeySpec{.name = "JournalWriteBehind", .type = T::kBool,
            .description = "Y: the journal's writer stores into a few buffers it maps once and reuses (files "
                           "write-behind-0..5 beside the segments), and the journal service writes them to the "
                           "segment files behind it with O_DIRECT, instead of the writer taking a new page-cache "
                           "page for every 4 KiB journaled (about 3.5 us of CPU a page on the lab's VM: 40% of the "
                           "venue's CPU at 850,000 orders/s). A process killed before the write-out loses nothing: "
                           "the next start writes back what the buffers hold. Readers of a running journal's files "
                           "(hft-journal) see records 4 MiB or 100 ms behind the writer. Costs up to six segments' "
                           "memory (JournalSegmentSize each, touched as written). Not with JournalDurability fsync "
                           "or sync. Default: Y with JournalLayout=shared (unless JournalDurability is fsync or "
                           "sync), N otherwise (each session's journal would have buffers of its own)."},
    KeySpec{.name = "JournalLargeFolios", .type = T::kBool, .default_value = "N",
            .description = "Y: every journal segment's mapping gets large page-cache folios (MADV_HUGEPAGE): the kernel "
                           "fills the page cache ahead of the writer in pieces of up to 2 MiB instead of one 4 KiB page "
                           "per fault, a sixth of the CPU per page or less, but caches a segment of 2 MiB or less whole "
                           "at its first page and up to 2 MiB ahead of each writer, and write-back writes whole pieces "
                           "(avoid with JournalDurability fsync or sync). For hosts whose memory is not taken back when "
                           "freed (bare metal): on the lab's VM, which gives freed memory back to its host, 1,000 "
                           "sessions ran at half the rate with it. Needs the kernel's transparent huge pages set to "
                           "madvise or always."},
    KeySpec{.name = "JournalDurability", .type = T::kEnum, .default_value = "os",
            .description = "`none`: memory only; `os`: survives a process crash (mapped file); `fsync`: also "
                           "flushed every JournalFsyncIntervalMs; `sync`: every append flushed (slow).",
            .choices = "none|os|fsync|sync"},
    KeySpec{.name = "JournalFsyncIntervalMs", .type = T::kDuration, .default_value = "100",
            .description = "With JournalDurability=fsync: the longest window of loss on power failure.",
            .min = 1, .max = 60'000, .unit_ns = kMilli},
    KeySpec{.name = "JournalRetainSegments", .type = T::kInt, .default_value = "0",
            .description = "Finished segments kept per journal; older ones are deleted. 0: keep all.",
            .min = 0, .max = 1'000'000},
    KeySpec{.name = "FileLogPath", .type = T::kPath,
            .description = "Directory (created if missing) where each session's event log goes to its own file, "
                           "named as QuickFIX names it: `FIX.4.4-SENDER-TARGET.event.current.log` "
                           "(`-QUALIFIER` appended when there is one); engine-level lines go to "
                           "`GLOBAL.event.current.log` in [DEFAULT]'s FileLogPath. Messages are not copied "
                           "there (no `.messages.current.log`): the journal under FileStorePath holds every "
                           "message (`hft-journal` dumps it). A directory or file that cannot be created "
                           "stops the start. Written by the log writer thread (docs/logging.md)."},
    KeySpec{.name = "FileLogBackupPath", .type = T::kPath, .description = "Accepted and ignored.",
            .support = S::kIgnored},
    KeySpec{.name = "ScreenLogShowIncoming", .type = T::kBool, .description = "Accepted and ignored.",
            .support = S::kIgnored},
    KeySpec{.name = "ScreenLogShowOutgoing", .type = T::kBool, .description = "Accepted and ignored.",
            .support = S::kIgnored},
    KeySpec{.name = "ScreenLogShowEvents", .type = T::kBool, .description = "Accepted and ignored.",
            .support = S::kIgnored},
    KeySpec{.name = "ScreenLogShowHeartBeats", .type = T::kBool, .description = "Accepted and ignored.",
            .support = S::kIgnored},
    KeySpec{.name = "MySQL*", .type = T::kString,
            .description = "QuickFIX MySQL store and log settings: accepted and ignored (libhft uses its "
                           "journal).",
            .support = S::kIgnored, .prefix = true},
    KeySpec{.name = "PostgreSQL*", .type = T::kString,
            .description = "QuickFIX PostgreSQL store and log settings: accepted and ignored.",
            .support = S::kIgnored, .prefix = true},
    KeySpec{.name = "Odbc*", .type = T::kString,
            .description = "QuickFIX ODBC store and log settings: accepted and ignored.", .support = S::kIgnored,
            .prefix = true},

    // --- Engine (only in [DEFAULT]) ---------------------------------------
    KeySpec{.name = "PollMode", .type = T::kEnum, .default_value = "epoll",
            .description = "`busy`: a non-blocking read on every socket in a loop (lowest latency, burns the "
                           "core); `epoll`: wait in epoll_wait up to EpollTimeoutMs.",
            .choices = "busy|epoll", .scope = kEngine},
    KeySpec{.name = "EpollTimeoutMs", .type = T::kDuration, .default_value = "1",
            .description = "With PollMode=epoll: longest wait for socket events (0: never block).", .min = 0,
            .max = 1000, .unit_ns = kMilli, .scope = kEngine},
    KeySpec{.name = "IdleStrategy", .type = T::kEnum, .default_value = "backoff",
            .description = "What the engine thread does after a pass with no work: `busy-spin`, `backoff` "
                           "(spin, yield, then sleep up to 1 ms) or `sleep` (1 ms).",
            .choices = "busy-spin|backoff|sleep", .scope = kEngine},
    KeySpec{.name = "TimerIntervalMs", .type = T::kDuration, .default_value = "10",
            .description = "Period of the sessions' timer checks (heartbeats, TestRequest, logon and logout "
                           "timeouts, schedule).",
            .min = 1, .max = 1000, .unit_ns = kMilli, .scope = kEngine},
    KeySpec{.name = "SocketCloseTimeoutMs", .type = T::kDuration, .default_value = "2000",
            .description = "Longest time a closing connection keeps sending what is queued (a Logout or Reject "
                           "behind a slow reader) before the socket is closed anyway; 0: close at once and drop "
                           "it.",
            .min = 0, .max = 60'000, .unit_ns = kMilli, .scope = kEngine},
    KeySpec{.name = "EngineThreadCore", .type = T::kInt, .default_value = "-1",
            .description = "CPU to pin the engine thread (the one calling Engine::run) to; -1: not pinned.", .min = -1, .max = 4095,
            .scope = kEngine},
    KeySpec{.name = "JournalThreadCore", .type = T::kInt, .default_value = "-1",
            .description = "CPU to pin the journal helper thread to; -1: not pinned.", .min = -1, .max = 4095,
            .scope = kEngine},
    KeySpec{.name = "MaxConnections", .type = T::kInt, .default_value = "64",
            .description = "Sessions connected at once (initiators included); an acceptor connection that "
                           "names a session beyond it is closed. Unset: 64, or the number of configured sessions "
                           "if that is more. Connections that have not named a session yet "
                           "have their own slots (MaxPendingConnections), so they cannot take these. Slots are "
                           "preallocated at start (their buffers on first use).",
            .min = 1, .max = 65536, .scope = kEngine},
    KeySpec{.name = "MaxPendingConnections", .type = T::kInt, .default_value = "64",
            .description = "Accepted connections that have not named a configured session yet, at once. When "
                           "they are all taken, a new connection closes the oldest of them, so a flood of idle "
                           "connections cannot keep a session's Logon out.",
            .min = 1, .max = 65536, .scope = kEngine},
    KeySpec{.name = "MaxPendingConnectionsPerAddress", .type = T::kInt, .default_value = "16",
            .description = "Of MaxPendingConnections, how many one source address may hold; more from it are "
                           "closed at once. A counterparty that opens many sessions from one host at the same "
                           "moment needs this many (the engine accepts up to 16 per pass before it reads their "
                           "Logons).",
            .min = 1, .max = 65536, .scope = kEngine},
    KeySpec{.name = "MaxPreLogonBytes", .type = T::kSize, .default_value = "8K",
            .description = "Bytes a connection may send before its first message is complete and names a "
                           "session; more closes it.",
            .min = 256, .max = kGiB, .scope = kEngine},
    KeySpec{.name = "LogLevel", .type = T::kEnum, .default_value = "info",
            .description = "Least severe event logged (`trace` is `debug`; `off`: none). Filters the "
                           "application's own logger too when set.",
            .choices = "trace|debug|info|warn|error|off",
            .scope = kEngine},
    KeySpec{.name = "LogFile", .type = T::kPath,
            .description = "File the engine appends its event log to (as well as to the application's logger, "
                           "if it passes one, and to FileLogPath); a file that cannot be opened stops the start. "
                           "Default: standard error when the application passes no logger and FileLogPath is "
                           "not set. Written by the log writer thread (docs/logging.md).",
            .scope = kEngine},
    KeySpec{.name = "LogRingSize", .type = T::kInt, .default_value = "8192",
            .description = "Event lines the engine thread can hand to the log writer before it catches up "
                           "(rounded up to a power of two; 512 bytes each, allocated at start). When the ring "
                           "is full a line is dropped and counted, and the writer logs \"N log lines dropped "
                           "(log ring full)\" once it has caught up.",
            .min = 16, .max = 1 << 24, .scope = kEngine},
    KeySpec{.name = "LogRateLimit", .type = T::kInt, .default_value = "100",
            .description = "WARN lines (what a counterparty can cause per message: garbled input, gaps, "
                           "rejects) logged per session in a one-second window; those over it are counted and "
                           "summed up as \"K similar lines suppressed\" when the window ends. 0: unlimited.",
            .min = 0, .max = 1'000'000, .scope = kEngine},
    KeySpec{.name = "HttpAcceptPort", .type = T::kPort,
            .description = "Port of the admin and metrics endpoint (HTTP/JSON and Prometheus /metrics, "
                           "docs/admin.md), served by a thread of its own, never the engine thread. Unset: no "
                           "endpoint; 0: any free port (Engine::admin_port() says which). QuickFIX's key for its "
                           "HTTP status page.",
            .min = 0, .max = 65535, .scope = kEngine},
    KeySpec{.name = "HttpAcceptAddress", .type = T::kHost, .default_value = "127.0.0.1",
            .description = "Address the admin endpoint listens on (with HttpAcceptPort). Anything but loopback "
                           "exposes session state to the network: state-changing commands always need the token "
                           "of HttpAdminTokenFile.",
            .scope = kEngine},
    KeySpec{.name = "HttpAdminTokenFile", .type = T::kPath,
            .description = "File holding the token (one line) that the admin endpoint's state-changing commands "
                           "must carry (`Authorization: Bearer <token>`); without it those commands are refused "
                           "(403) and reads are still served. A file that is missing, empty or readable by "
                           "others (mode o+r) stops the start. Needs HttpAcceptPort.",
            .scope = kEngine},
    KeySpec{.name = "HttpAdminAuditFile", .type = T::kPath,
            .description = "File the admin endpoint appends one JSON line to per state-changing command (time, "
                           "remote address, user, command, session, arguments, HTTP status, result), refused ones "
                           "included; created with mode 0600. Needs HttpAcceptPort.",
            .scope = kEngine},
};

}  // namespace

std::span<const KeySpec> config_schema() noexcept { return kSchema; }

}  // namespace hft::engine
