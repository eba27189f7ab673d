package secretscan

// cards finds payment card numbers: 13 to 19 digits, optionally grouped by
// single spaces or dashes, not next to other digits or letters, with a
// card brand's prefix and length, that pass the Luhn check. A run that is
// not a card may begin with one that ends at a group's end (a card
// followed by its expiry date or code): the longest such one counts. A
// card right after another secret (see scanner.ended) stands alone.
func cards(s *scanner) []Finding {
	text := s.text
	var found []Finding
	var digits [19]byte
	for i := 0; i < len(text); i++ {
		if !isDigit(text[i]) || i > 0 && (isWord(text[i-1]) && !s.ended(i) || (text[i-1] == '-' || text[i-1] == '.') && i > 1 && isDigit(text[i-2]) && !s.ended(i-1)) {
			continue
		}
		// Collect the run starting at i.
		n, j, end := 0, i, i
		var cuts [len(digits) + 1][2]int // digits and end at each group's end
		nc := 0
		for j < len(text) && n < len(digits)+1 {
			c := text[j]
			if isDigit(c) {
				if n < len(digits) {
					digits[n] = c
				}
				n++
				j++
				end = j
				continue
			}
			if (c == ' ' || c == '-') && j+1 < len(text) && isDigit(text[j+1]) && j > i {
				if nc < len(cuts) {
					cuts[nc] = [2]int{n, end}
					nc++
				}
				j++
				continue
			}
			break
		}
		s.work += j - i + 1
		groups := nc // the cuts between groups
		if !(end < len(text) && (isWord(text[end]) || text[end] == '.' && end+1 < len(text) && isDigit(text[end+1]))) {
			cuts[nc] = [2]int{n, end}
			nc++
		}
		next := restart(text, cuts[:groups], end)
		for k := nc - 1; k >= 0; k-- {
			if m := cuts[k][0]; m >= 13 && m <= 19 && cardBrand(digits[:m]) && luhn(digits[:m]) {
				found = append(found, Finding{Kind: "a payment card number", Start: i, End: cuts[k][1]})
				s.markEnd(cuts[k][1])
				next = cuts[k][1] // the run may go on with another card
				break
			}
		}
		i = next
	}
	return found
}

// restart returns where the search for a card goes on after a run of
// digit groups in which none starts: before its first group after a blank
// that could begin a card (four digits or more, or the last group, which
// may go on past the digits collected), so that a card written after
// another number ("Order 58213 4111 1111 1111 1111") is found; else the
// run's end. A group after a dash goes on the number before it, as the
// start of a run does not. Restarting only at groups of four digits or
// more walks each byte a bounded number of times.
func restart(text []byte, cuts [][2]int, end int) int {
	for k, c := range cuts {
		if text[c[1]] != ' ' {
			continue
		}
		if k == len(cuts)-1 || cuts[k+1][0]-c[0] >= 4 {
			return c[1]
		}
	}
	return end
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// cardBrand reports whether the number has the prefix and length of Visa,
// Mastercard, American Express, Discover, JCB, Diners Club or UnionPay.
func cardBrand(d []byte) bool {
	n := len(d)
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p4 := p2*100 + int(d[2]-'0')*10 + int(d[3]-'0')
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p4 == 6011, p2 == 65, p4 >= 6440 && p4 <= 6499:
		return n >= 16 && n <= 19
	case p4 >= 3528 && p4 <= 3589:
		return n >= 16 && n <= 19
	case p2 == 36, p2 == 38, p4 >= 3000 && p4 <= 3059:
		return n >= 14 && n <= 19
	case p2 == 62:
		return n >= 16 && n <= 19
	}
	return false
}

func luhn(d []byte) bool {
	sum := 0
	for i := range d {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}
