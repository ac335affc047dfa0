// `exactly-broker admin HOST:PORT COMMAND...`: sends one command line to a broker's admin port
// and prints the reply; exits 0 when the reply is "ok".
#ifndef EXACTLY_BROKER_ADMIN_ADMIN_CLIENT_H_
#define EXACTLY_BROKER_ADMIN_ADMIN_CLIENT_H_

namespace exactly::broker {

int AdminClientMain(int argc, char** argv);

}  // namespace exactly::broker

#endif  // EXACTLY_BROKER_ADMIN_ADMIN_CLIENT_H_
