package backup

import (
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/scrypt"
)

// sealedPieceMagic opens an encrypted piece of the binary log archive.
const sealedPieceMagic = "appkeeper-binlog-sealed-1\n"

// pieceSealer encrypts the archive's pieces with a key derived once from the backup
// passphrase: a piece is shipped every second, and deriving a key per object (as an artifact's
// age header does) would cost a core a fraction of every second.
type pieceSealer struct {
	aead interface {
		NonceSize() int
		Seal(dst, nonce, plaintext, additionalData []byte) []byte
		Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
	}
}

// newPieceSealer derives the archive's key from the passphrase, salted with the archive's root
// so that two archives never share a key.
func newPieceSealer(passphrase, root string) (*pieceSealer, error) {
	key, err := scrypt.Key([]byte(passphrase), []byte("appkeeper binary log archive "+root), 1<<scryptWorkFactor, 8, 1, chacha20poly1305.KeySize)
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, err
	}
	return &pieceSealer{aead: aead}, nil
}

// seal encrypts a piece; its name is authenticated with it, so that a piece moved to another
// name does not open.
func (s *pieceSealer) seal(name string, plain []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte(sealedPieceMagic), nonce...)
	return s.aead.Seal(out, nonce, plain, []byte(name)), nil
}

func (s *pieceSealer) open(name string, sealed []byte) ([]byte, error) {
	header := len(sealedPieceMagic) + s.aead.NonceSize()
	if len(sealed) < header || string(sealed[:len(sealedPieceMagic)]) != sealedPieceMagic {
		return nil, fmt.Errorf("the archived piece %s is not a sealed piece", name)
	}
	plain, err := s.aead.Open(nil, sealed[len(sealedPieceMagic):header], sealed[header:], []byte(name))
	if err != nil {
		return nil, fmt.Errorf("the archived piece %s does not open with the passphrase given: it is another archive's, it was altered, or the passphrase is wrong", name)
	}
	return plain, nil
}

// errNoPassphrase is returned for an encrypted piece read without a passphrase.
var errNoPassphrase = errors.New("the archive is encrypted: give its passphrase in " + EnvEncryptionKey)
