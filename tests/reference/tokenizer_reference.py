"""Golden tokenisations for train/data/tokenizer.cpp and punkt.cpp, produced by NLTK itself.

The SCAN-lineage repositories tokenise a caption with nltk.word_tokenize(caption.strip().lower()): Punkt sentence
splitting, then NLTKWordTokenizer on each sentence. NLTK's trained English Punkt model (nltk_data `punkt`) is not
available here, so the sentence splitter runs with an explicit parameter set — the abbreviation list below, no
collocations, no sentence starters, no orthographic statistics — which rematch uses too (see punkt.h for why the
difference from the trained model is confined to that list). Everything else is NLTK's own code.

Run from the repository root: /usr/bin/python3 tests/reference/tokenizer_reference.py
(Debian: apt-get install python3-nltk). Writes tests/fixtures/tokenizer/captions.json.
"""
import json
import random

import nltk
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

# Must equal caption_punkt_parameters() in train/data/punkt.cpp; the C++ test compares the two.
ABBREVIATIONS = [
    "a.m", "p.m", "e.g", "i.e", "etc", "vs", "approx", "mr", "mrs", "ms", "dr", "prof", "jr", "sr", "st", "mt",
    "ft", "ave", "blvd", "rd", "inc", "ltd", "co", "corp", "dept", "u.s", "u.k", "u.s.a", "lbs", "oz",
]

_params = PunktParameters()
_params.abbrev_types = set(ABBREVIATIONS)
PUNKT = PunktSentenceTokenizer(_params)
WORDS = NLTKWordTokenizer()


def word_tokenize(text):
    """nltk.word_tokenize with our Punkt parameters."""
    return [tok for sent in PUNKT.tokenize(text) for tok in WORDS.tokenize(sent)]


HAND_WRITTEN = [
    # Ordinary COCO / Flickr30K captions.
    "A man riding a wave on top of a surfboard.",
    "Two dogs playing with a frisbee in the park",
    "A woman is holding an umbrella while walking down the street .",
    "A group of people standing around a table with food on it.",
    "there is a cat that is sitting on the couch",
    "A close up of a plate of food with broccoli",
    "An elephant standing next to a tree in a field.\n",
    # Several sentences, and periods that do not end one.
    "A dog. A cat is sleeping.", "Two men are talking! One is laughing?", "A man is here.A woman is there.",
    "a sign that reads: stop. slow down.", "The bus is red. It is parked. Nobody is inside.",
    "A kitchen.", "a kitchen . a sink", "Is this a dog? yes it is.", "wow! look at that!",
    "St. Bernard dog on the snow", "Dr. Smith's office is closed.", "at 5 p.m. a bus arrives",
    "the U.S. flag is waving", "plates, cups, etc. on a table", "e.g. a cat", "Mt. Fuji in the distance.",
    "a sign for Main St. and 5th Ave.", "a 6 ft. tall man", "Mr. and Mrs. Jones at a party",
    "J. R. R. Tolkien book on a shelf", "a sign with the letter A. on it", "x-dr. who is here",
    "2. people are walking", "a 3.5 inch screen", "$5.99 sale sign", "the year 1999. a car drives by",
    "10,000 people in a stadium", "1,2,3 go", "a clock showing 5:30", "at 12:45 p.m. the train left",
    "no. 5 on the jersey", "cats vs. dogs", "in the U.S.A. today", "the time is 9 a.m.", "a.b.c.", "U.S.A.",
    "the score was 3-2. the crowd cheered", "a. b. c. d.", "item 4. item 5.", "-5. degrees outside",
    # Contractions and clitics.
    "I don't know", "it's a dog", "they can't go", "he won't stop", "I'm here", "they're playing", "we've won",
    "you'll see", "he'd go", "I cannot see", "we're gonna win", "you gotta see this", "I wanna go home",
    "lemme see", "gimme that", "'tis the season", "'twas the night", "d'ye know", "more'n enough", "ain't it",
    "y'all come back", "five o'clock shadow", "rock 'n' roll band", "DON'T WALK sign", "IT'S OK",
    "WE'LL SEE", "THEY'RE HERE", "YOU'VE GOT MAIL", "I'D GO", "I'M OK", "SHE'S GONE", "Cannot Stop",
    "WANNA play", "wanna.", "cannotx is not a word", "xcannot either", "gonna", "the dog's' bowl",
    "'s alone", "a 'quoted' word", "the 'a' key", "the 'x key", "'s", "'m", "can't'", "rock'n'roll",
    # Possessives.
    "the man's hat", "the dogs' bowls are empty", "James' car", "children's toys", "the boss's desk",
    "the cat's' tail", "Charles's book", "the 90's style", "Tom'S hat",
    # Quotes.
    '"hello" sign', 'a sign that says "stop"', "''double single'' quotes", "`backtick` here",
    "``already`` converted", "a ```triple``` tick", "‘curly’ single", "“smart quotes” here",
    "«guillemets» here", "„low quote“ there", '"a dog."', '"a dog." a cat', 'a dog." a cat.',
    'he said "no".', '("quoted")', '["x"]', "{''y''}", "<\"z\">", "a \"b\" c", 'ends with quote"',
    "'single quoted sentence.'", "it’s a cat’s toy", "don’t", "the dogs’ bowls", '" leading quote',
    # Hyphens and dashes.
    "well-known place", "a t-shirt", "black-and-white photo", "--double dash--", "a - b", "---",
    "a dog -- a cat", "the dog.-- a cat", "x--y", "a -- b -- c", "----", "-", "- dash start",
    # Brackets.
    "a cat (black) on a mat", "[sic]", "{braces}", "<tag>", "(a dog.) a cat.", "a dog.) a cat",
    "(a dog.)", "(.)", "((nested))", "[a] [b]", "a dog (in a park).", "(How is this?) fine.",
    # Symbols.
    "50% off", "#1 fan", "@user says hi", "a & b", "cats; dogs", "a * star", "what?!", "wow!!!", "hmm...",
    "**bold**", "a+b=c", "$100", "email me at a@b.com", "50%.", "#hashtag.", "semi;colon;list",
    # Ellipses.
    "a man... walking", "a man . . . walking", "the end....", "wait.. what", ". . . .", "a . . b",
    "... at start", "a man ...", "so.... many.... dots", "a. . .b", "end . . .", "x .. y",
    # Commas and colons.
    "red,white,blue", "a, b, c", "time: 10", "ratio 3:2", "ends with comma,", "ends with colon:",
    "1,000", "a,1", "a:b", ",leading comma", "double,,comma", "colon:: twice", "a ,b", "end,\n",
    # Whitespace.
    "  multiple   spaces  ", "tab\tseparated\twords", "a dog .", "a dog . ", " . ", "line\nbreak. here",
    "para\n\nbreak", "trailing newline.\n", "cr\r\nlf", "a\u00a0non-breaking space", "a\u3000ideographic space",
    # Unicode.
    "café on the corner", "naïve résumé", "Ångström units", "İstanbul street", "ΣΊΣΥΦΟΣ", "Москва зимой",
    "日本の猫", "emoji 😀 cat", "piñata party", "ﬁsh ligature", "straße", "ǅemal", "ſtreet",
    "cafe\u0301 decomposed", "en–dash and em—dash", "1½ cups", "x² plus", "mañana.", "café. Naïve",
    "ΟΔΥΣΣΕΥΣ ΚΑΙ ΣΥ", "Σ alone", "ΑΣ.", "ΑΣ'Α", "aΣb", "ΑΣ\u0301", "ΑΣ1", "1Σ",
    "ÉCOLE", "über 5. straße", "ı dotless", "Ǆ", "ΣΑΣ", "I\u0307", "Ⅻ roman", "٣ arabic digit", "٣. x",
    # Degenerate inputs.
    "", ".", "...", "!", "?", "a", "a.", "'", "''", '"', "' '", "`", ",", ":", ";", "(", ")", "-.", ".a", "a.b",
    "'x", "x'", "'''", "\"\"", "a .", "! a", "? ?", ".\n.", "a.\n", "\n", "\t", "A", "I.", "5.", ".5", "-5",
]

SUBJECTS = ["a man", "A woman", "two dogs", "The cat", "a group of people", "an old car", "Kids", "the chef",
            "a brown horse", "Three zebras", "a little girl", "The bus", "a teddy bear", "someone"]
VERBS = ["is riding", "are sitting on", "is standing next to", "holds", "is eating", "jumps over", "looks at",
         "is parked near", "walks past", "plays with", "is lying on", "flies above"]
OBJECTS = ["a skateboard", "the red bench", "a slice of pizza", "a wooden table", "the ocean", "a kite",
           "two umbrellas", "a laptop computer", "the fire hydrant", "a baseball bat", "snow-covered hills"]
EXTRAS = ["", " in the rain", " at night", " near a lake", " on a sunny day", " while smiling",
          " (in black and white)", " - outdoors", " at 3 p.m.", " in the U.S.", " with St. Patrick's hats"]
INSERTS = [" don't", " it's", " can't", ",", ";", ":", " --", "...", " \"really\"", " 'quoted'", "!", "?",
           " (sic)", " etc.", " e.g.", " 5.", " J.", " 3:30", " $20", " 50%", " #2", " &", " *", "’s", "'s",
           " cannot", " gonna", " o'clock", "  ", " .", ". ", "!! ", "?? ", " ``", "''", " well-known", " A."]
ENDINGS = ["", ".", " .", "!", "?", "...", ". ", ".\"", ".)", "'.", ".'", ". \" ", " . . .", ",", ":", "--"]


def generated(count, seed=20240501):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        words = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(EXTRAS)}".split(" ")
        for _ in range(rng.randint(0, 3)):
            pos = rng.randint(0, len(words))
            words.insert(pos, rng.choice(INSERTS).strip(" ") if rng.random() < 0.3 else rng.choice(INSERTS))
        text = " ".join(w for w in words if w) + rng.choice(ENDINGS)
        if rng.random() < 0.25:  # a second sentence
            text += " " + rng.choice(SUBJECTS).capitalize() + " " + rng.choice(VERBS) + rng.choice(ENDINGS)
        out.append(text)
    return out


def main():
    captions = HAND_WRITTEN + generated(520)
    cases = []
    for caption in captions:
        lowered = caption.strip().lower()
        cases.append({
            "caption": caption,
            "tokens": word_tokenize(lowered),          # the pipeline the repositories run
            "sentences": PUNKT.tokenize(lowered),
            "words": word_tokenize(caption),           # mixed case, no strip
            "treebank": WORDS.tokenize(caption),
        })
    lower = [{"text": t, "lower": t.lower(), "strip": t.strip()} for t in HAND_WRITTEN]
    fixture = {"nltk_version": nltk.__version__, "abbreviations": ABBREVIATIONS, "cases": cases, "lower": lower}
    with open("tests/fixtures/tokenizer/captions.json", "w", encoding="utf-8") as f:
        json.dump(fixture, f, ensure_ascii=False, indent=0)
    print(f"{len(cases)} captions written")


if __name__ == "__main__":
    main()
