// Command partita is the Partita server and its tools.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	root := &cobra.Command{
		Use:           "partita",
		Short:         "Partita: a partitioned JSON document database that speaks the Azure Cosmos DB API",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return flagsFromEnv(cmd.Flags())
		},
	}
	root.AddCommand(serveCommand(), partitionsCommand(), clusterCommand(), nodeCommand(), sqlCommand(), importCommand(), exportCommand(), adviseCommand(), chaosCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "partita:", err)
		os.Exit(1)
	}
}

// flagsFromEnv gives every flag not set on the command line the value of PARTITA_<FLAG>
// (upper case, '-' as '_'), so that `--data` can also be set as PARTITA_DATA.
func flagsFromEnv(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		name := "PARTITA_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v, ok := os.LookupEnv(name)
		if !ok || f.Changed || err != nil {
			return
		}
		if serr := f.Value.Set(v); serr != nil {
			err = fmt.Errorf("%s=%q: %w", name, v, serr)
		}
	})
	return err
}
