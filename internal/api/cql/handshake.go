package cql

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// What OPTIONS and AUTHENTICATE advertise.
const (
	cqlVersion    = "3.4.5" // Cassandra 3.11's, which keeps drivers on the paths Partita serves
	authenticator = "org.apache.cassandra.auth.PasswordAuthenticator"
	lz4Name       = "lz4" // as Cassandra spells it in SUPPORTED
)

func supported() *message.Supported {
	return &message.Supported{Options: map[string][]string{
		message.StartupOptionCqlVersion:  {cqlVersion},
		message.StartupOptionCompression: {lz4Name},
	}}
}

// startup takes the connection's options and asks for credentials: every session signs in.
func (c *conn) startup(m *message.Startup) message.Message {
	if c.state != stateNew {
		return &message.ProtocolError{ErrorMessage: "Unexpected message STARTUP, the connection is already initialized"}
	}
	v, ok := m.Options[message.StartupOptionCqlVersion]
	if !ok {
		return &message.ProtocolError{ErrorMessage: "Missing value CQL_VERSION in STARTUP message"}
	}
	if !strings.HasPrefix(v, "3.") {
		return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Invalid or unsupported CQL version %s; the supported version is %s", v, cqlVersion)}
	}
	switch comp := m.Options[message.StartupOptionCompression]; strings.ToLower(comp) {
	case "":
	case lz4Name:
		// From the answer to STARTUP on, as Cassandra does; drivers go by each frame's flag.
		c.fr.codec = c.srv.lz4
		c.compress.Store(true)
	default:
		return &message.ProtocolError{ErrorMessage: "Unknown compression algorithm: " + comp}
	}
	c.state = stateAuth
	return &message.Authenticate{Authenticator: authenticator}
}

// authResponse checks SASL PLAIN credentials: the account name and one of its keys.
func (c *conn) authResponse(m *message.AuthResponse) message.Message {
	if c.state != stateAuth {
		return c.unexpected(primitive.OpCodeAuthResponse)
	}
	user, password, ok := plainCredentials(m.Token)
	if !ok {
		return &message.AuthenticationError{ErrorMessage: "Authentication failed: the SASL PLAIN token must be authzid NUL username NUL password"}
	}
	readOnly, ok := c.srv.authenticate(user, password)
	if !ok {
		return &message.AuthenticationError{ErrorMessage: fmt.Sprintf("Provided username %s and/or password are incorrect", user)}
	}
	c.smu.Lock()
	c.session.ReadOnly = readOnly
	c.smu.Unlock()
	c.state = stateReady
	return &message.AuthSuccess{}
}

// unexpected answers a message the handshake does not allow yet, in Cassandra's words.
func (c *conn) unexpected(op primitive.OpCode) message.Message {
	name := strings.TrimPrefix(op.String(), "OpCode ")
	if i := strings.IndexByte(name, ' '); i > 0 {
		name = name[:i]
	}
	switch c.state {
	case stateNew:
		return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Unexpected message %s, expecting STARTUP or OPTIONS", name)}
	case stateAuth:
		return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Unexpected message %s, expecting SASL_RESPONSE", name)}
	}
	return &message.ProtocolError{ErrorMessage: fmt.Sprintf("Unexpected message %s, the connection is already authenticated", name)}
}

// plainCredentials splits a SASL PLAIN token (RFC 4616: [authzid] NUL authcid NUL passwd); like
// Cassandra it reads the last two fields and ignores the authorization id.
func plainCredentials(token []byte) (user, password string, ok bool) {
	last := bytes.LastIndexByte(token, 0)
	if last < 0 {
		return "", "", false
	}
	first := bytes.LastIndexByte(token[:last], 0)
	return string(token[first+1 : last]), string(token[last+1:]), true
}

// authenticate reports whether user and password sign in, and whether read-only. Every
// comparison is made, in constant time, so that timing tells nothing about either secret.
func (s *Server) authenticate(user, password string) (readOnly, ok bool) {
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(s.opts.Username)) == 1
	rw := subtle.ConstantTimeCompare([]byte(password), []byte(s.opts.Key)) == 1
	ro := s.opts.ReadOnlyKey != "" && subtle.ConstantTimeCompare([]byte(password), []byte(s.opts.ReadOnlyKey)) == 1
	if !userOK || s.opts.Key == "" || (!rw && !ro) {
		return false, false
	}
	return !rw, true
}
