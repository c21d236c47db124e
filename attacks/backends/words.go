package backends

import (
	"errors"
	"strings"
)

// SplitWords splits a command prefix given on the command line into words
// as a POSIX shell splits them, without expanding anything: blanks
// separate words; single quotes keep everything up to the next single
// quote; double quotes keep everything up to the next unescaped double
// quote, where a backslash escapes only \, ", $ and `; outside quotes a
// backslash keeps the next character. Nothing is run through a shell, so
// $VAR, globs and ~ stay as written.
func SplitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, errors.New("unterminated single quote")
			}
			w.WriteString(string(rs[i+1 : j]))
			i = j
		case c == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune(`\"$`+"`", rs[j+1]) {
					j++
				}
				w.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, errors.New("unterminated double quote")
			}
			i = j
		case c == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("a backslash ends the prefix")
			}
			inWord = true
			i++
			w.WriteRune(rs[i])
		default:
			inWord = true
			w.WriteRune(c)
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
