#!/usr/bin/env python3
# Writes the initiator-side scripts of fix44/ (BodyLength of every expected
# message computed here). Run it after changing a case: python3 make_scripts.py
import os, re
T="00000000-00:00:00.000"
def E(body):
    # body: fields after BodyLength, '|' separated, ending with '|', without 10
    b=body.replace('|','\x01')
    return "E8=FIX.4.4\x019=%d\x01%s10=0\x01" % (len(b), b)
def I(body):
    return "I8=FIX.4.4\x01"+body.replace('|','\x01')
def eng(t,seq,rest="",extra_hdr=""):  # from the engine (ISLD) to the driver (TW)
    return E("35=%s|34=%d|%s49=ISLD|52=%s|56=TW|%s"%(t,seq,extra_hdr,T,rest))
def drv(t,seq,rest="",extra_hdr=""):
    return I("35=%s|34=%d|%s49=TW|52=<TIME>|56=ISLD|%s"%(t,seq,extra_hdr,rest))
def resent(t,seq,rest):  # a resend from the engine: 43 after 34, 122 after 56
    return E("35=%s|34=%d|43=Y|49=ISLD|52=%s|56=TW|122=%s|%s"%(t,seq,T,T,rest))
LOGON_E=eng("A",1,"98=0|108=6|141=Y|")
LOGON_I=drv("A",1,"98=0|108=6|141=Y|")
def logon(): return ["eCONNECT", LOGON_E, LOGON_I]
def bye(dseq,eseq): return [drv("5",dseq), eng("5",eseq), "eDISCONNECT"]
ORDER="11=ID|21=3|40=1|54=1|55=INTC|60=<TIME>|"
ORDER_E="11=ID|21=3|40=1|54=1|55=INTC|60=00000000-00:00:00|"
S={}
S["1a_LogonAndLogoutByAcceptor"]=("The engine connects and logs on; the acceptor answers, then logs out:\n# the engine answers the Logout and disconnects.",
  logon()+bye(2,2))
S["1b_LogonAnsweredWithMsgSeqNumTooHigh"]=("The Logon answer's MsgSeqNum is higher than expected: the engine asks for\n# the gap (ResendRequest 1 to infinity) and goes on once it is filled.",
  ["eCONNECT",LOGON_E,drv("A",5,"98=0|108=6|"),
   eng("2",2,"7=1|16=0|"),
   drv("4",1,"123=Y|36=5|","43=Y|").replace("56=ISLD\x01","56=ISLD\x01122=<TIME>\x01"),
   drv("1",6,"112=AFTERGAP|"), eng("0",3,"112=AFTERGAP|")]+bye(7,4))
S["1c_LogonRefusedWithLogout"]=("The acceptor answers the Logon with a Logout: the engine does not log on;\n# it answers the Logout (as QuickFIX does) and disconnects.",
  ["eCONNECT",LOGON_E,drv("5",1,"58=Not allowed|"),eng("5",2),"eDISCONNECT"])
S["2a_TestRequestAnswered"]=("A TestRequest from the acceptor is answered with its TestReqID.",
  logon()+[drv("1",2,"112=HELLO|"),eng("0",2,"112=HELLO|")]+bye(3,3))
S["2b_MsgSeqNumTooLow"]=("A message below the expected MsgSeqNum without PossDupFlag: Logout with\n# the reason, then disconnect.",
  logon()+[drv("1",2,"112=ONE|"),eng("0",2,"112=ONE|"),drv("1",2,"112=AGAIN|"),
   eng("5",3,"58=MsgSeqNum too low, expecting 3 but received 2|"),"eDISCONNECT"])
S["2c_MsgSeqNumTooHigh"]=("A gap from the acceptor: ResendRequest from the first missing number;\n# the resent message is processed, then the queued one.",
  logon()+[drv("1",4,"112=LATE|"),eng("2",2,"7=2|16=0|"),
   drv("1",2,"112=FIRST|","43=Y|").replace("56=ISLD\x01","56=ISLD\x01122=<TIME>\x01"),
   eng("0",3,"112=FIRST|"),
   drv("4",3,"123=Y|36=4|","43=Y|").replace("56=ISLD\x01","56=ISLD\x01122=<TIME>\x01"),
   eng("0",4,"112=LATE|")]+bye(5,5))
S["2d_GarbledMessage"]=("A garbled message is ignored and its number not used: the next message\n# with that number is processed.",
  logon()+["I8=FIX.4.4\x019=52\x0135=1\x0134=2\x014garbled9=TW\x0152=<TIME>\x0156=ISLD\x0110=0\x01",
   drv("1",2,"112=CLEAN|"),eng("0",2,"112=CLEAN|")]+bye(3,3))
S["2e_PossDupAlreadyReceived"]=("A PossDup message already received is ignored.",
  logon()+[drv("1",2,"112=ONE|"),eng("0",2,"112=ONE|"),
   drv("1",2,"112=ONE|","43=Y|").replace("56=ISLD\x01","56=ISLD\x01122=<TIME>\x01"),
   drv("1",3,"112=TWO|"),eng("0",3,"112=TWO|")]+bye(4,4))
S["2f_PossDupNoOrigSendingTime"]=("A PossDup message without OrigSendingTime: Reject, and no number used.",
  logon()+[drv("1",2,"112=ONE|"),eng("0",2,"112=ONE|"),
   drv("1",2,"112=ONE|","43=Y|"),
   eng("3",3,"45=2|58=Required tag missing|371=122|372=1|373=1|"),
   drv("1",3,"112=TWO|"),eng("0",4,"112=TWO|")]+bye(4,5))
S["3a_SequenceResetGapFill"]=("A SequenceReset-GapFill moves the expected number forward.",
  logon()+[drv("4",2,"123=Y|36=5|"),drv("1",5,"112=AFTER|"),eng("0",2,"112=AFTER|")]+bye(6,3))
S["3b_SequenceResetReset"]=("A SequenceReset-Reset moves the expected number, whatever its MsgSeqNum.",
  logon()+[drv("4",2,"36=20|"),drv("1",20,"112=AFTER|"),eng("0",2,"112=AFTER|")]+bye(21,3))
S["3c_SequenceResetNewSeqNoLower"]=("A SequenceReset-Reset to a lower number is rejected (value incorrect).",
  logon()+[drv("1",2,"112=ONE|"),eng("0",2,"112=ONE|"),drv("4",3,"36=2|"),
   eng("3",3,"45=3|58=Value is incorrect (out of range) for this tag|372=4|373=5|"),
   drv("1",3,"112=TWO|"),eng("0",4,"112=TWO|")]+bye(4,5))
S["4a_ResendRequestGapFillsAdminAndResendsOrders"]=("A ResendRequest from the acceptor: session messages become a gap fill,\n# application messages are resent with PossDupFlag and OrigSendingTime.",
  logon()+[drv("D",2,ORDER),eng("D",2,ORDER_E),drv("1",3,"112=HB|"),eng("0",3,"112=HB|"),
   drv("D",4,ORDER.replace("INTC","CDG")),eng("D",4,ORDER_E.replace("INTC","CDG")),
   drv("2",5,"7=1|16=0|"),
   resent("4",1,"36=2|123=Y|"), resent("D",2,ORDER_E), resent("4",3,"36=4|123=Y|"), resent("D",4,ORDER_E.replace("INTC","CDG")),
   drv("1",6,"112=STILL|"),eng("0",5,"112=STILL|")]+bye(7,6))
S["5a_HeartbeatsAndTestRequestTimeout"]=("Heartbeats at HeartBtInt while the acceptor is silent, a TestRequest\n# when nothing arrives, and a disconnect when it stays unanswered.",
  logon()+[eng("0",2),drv("0",2),eng("0",3),eng("1",4,"112=TEST|"),drv("0",3,"112=TEST|"),
   eng("0",5),eng("1",6,"112=TEST|"),"eDISCONNECT"])
S["6a_LogoutByEngine"]=("The engine logs out (its application asks, on a News with Headline\n# LOGOUT); the acceptor answers and the engine disconnects.",
  logon()+[drv("B",2,"148=LOGOUT|33=1|58=bye|"),eng("5",2),drv("5",3),"eDISCONNECT"])
S["7a_ReconnectAfterDisconnect"]=("The acceptor drops the connection: the engine reconnects after\n# ReconnectInterval and logs on again from 1 (ResetOnDisconnect).",
  logon()+[drv("1",2,"112=ONE|"),eng("0",2,"112=ONE|"),"iDISCONNECT"]+logon()+bye(2,2))
d=os.path.join(os.path.dirname(os.path.abspath(__file__)), "fix44")
for name,(comment,lines) in S.items():
    with open(os.path.join(d,name+".def"),"w") as f:
        f.write("# "+comment+"\n\n"+"\n".join(lines)+"\n")
print(len(S))
