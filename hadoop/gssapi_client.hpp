#pragma once

// SASL GSSAPI (RFC 4752) on MIT's GSSAPI library: Hadoop's KERBEROS auth
// method. The exchange, as Hadoop's Java server (GssKrb5Server) runs it:
//
//   INITIATE  ◀ gss_init_sec_context: AP-REQ for the server's principal
//   CHALLENGE ▶ AP-REP (mutual authentication) ─▶ context complete,
//   RESPONSE  ◀ empty
//   CHALLENGE ▶ wrap(layers offered | server's max buffer, 3 bytes)
//   RESPONSE  ◀ wrap(layer chosen | our max buffer, 3 bytes)
//   SUCCESS
//
// Layers: 1 none (auth), 2 integrity (auth-int), 4 privacy (auth-conf);
// the strongest one the server offers and the client accepts is chosen.
// With auth-int or auth-conf, wrap()/unwrap() are gss_wrap/gss_unwrap
// (with or without confidentiality) for the rest of the connection.
//
// The target is the principal the caller already checked against its
// configuration, imported as a Kerberos principal name: no DNS
// canonicalization can turn it into another one.

#include <memory>
#include <string>

#include "hadoop/kerberos.hpp"
#include "hadoop/sasl_mechanism.hpp"

namespace tony::hadoop {

/// A GSSAPI client authenticating `creds` to `server_principal`
/// ("rm/host@REALM").
expected<std::unique_ptr<sasl_mechanism>>
make_gssapi_client(std::shared_ptr<const kerberos_credentials> creds,
                   const std::string& server_principal,
                   qop_set accepted = qop_set::all());

} // namespace tony::hadoop
